"""Suite files: the shipped ones parse; mistakes name the file and the key."""

from pathlib import Path

import pytest

from harness.jobs.suite import SuiteError, load_suite

SUITES = Path(__file__).parents[3] / "scenarios" / "suites"
SMOKE = (SUITES.parent / "smoke.yaml").resolve()


def _suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def test_the_shipped_suites_parse() -> None:
    nightly = load_suite(SUITES / "nightly.yaml")
    formats = load_suite(SUITES / "formats.yaml")
    assert [e.id for e in nightly.entries] == [
        "smoke",
        "bank",
        "blocking-vs-async",
        "blocking-vs-async-shared-wait",
        "blocking-vs-async-compare",
        "chaos-mix",
        "s3-standalone",
        *(e.id for e in formats.entries),  # include: [formats.yaml, network.yaml]
        *(e.id for e in load_suite(SUITES / "network.yaml").entries),
    ]
    assert {e.scenario.system.kind for e in formats.entries} == {
        "instantbench",
        "hudi",
        "delta",
        "iceberg",
    }
    assert nightly.entries[3].scenario.engine.truetime.shared_wait
    assert nightly.entries[4].compare and not nightly.entries[2].compare  # the main job
    assert nightly.benchmarks is not None and nightly.benchmarks.path.name == "benchmarks"
    quick = load_suite(SUITES / "quick.yaml")
    (entry,) = quick.entries
    assert entry.id == "smoke" and entry.scenario.duration_s == 12
    assert quick.benchmarks is None
    soak = load_suite(SUITES / "false-alarms.yaml")
    assert [(e.id, e.repeat) for e in soak.entries][:2] == [("smoke", 20), ("bank", 20)]
    switched_on = [e.scenario.engine.safety for e in soak.entries[2:]]
    assert len(switched_on) == 5 and all(all(s.model_dump().values()) for s in switched_on)


def test_the_java_reader_suite_judges_every_shipped_local_scenario() -> None:
    """Every shipped scenario with an engine table on local storage runs once with
    hudi_java_reader among its checks, each detection with its switch on."""
    root = SUITES.parent
    # compaction-fails.yaml ends `unknown` by design (its driver fails loudly).
    skipped = {"s3-smoke.yaml", "ceiling.yaml", "blocking-vs-async.yaml", "compaction-fails.yaml"}
    shipped = {
        p.resolve()
        for p in [*root.glob("*.yaml"), *root.glob("faults/*.yaml"), *root.glob("detect/*.yaml")]
        if p.name not in skipped
    }
    suite = load_suite(SUITES / "java-reader.yaml")
    on = [e for e in suite.entries if e.expect is not None and e.expect.verdict == "valid"]
    assert {e.file.resolve() for e in on} == shipped
    for entry in suite.entries:
        assert entry.expect is not None and "hudi_java_reader" in entry.expect.checks
        assert "hudi_java_reader" in entry.scenario.checks
    assert all(all(e.scenario.engine.safety.model_dump().values()) for e in on)


def test_overrides_keep_the_series_id(tmp_path: Path) -> None:
    suite = load_suite(
        _suite(
            tmp_path,
            f"name: s\nscenarios:\n  - scenario: {SMOKE}\n"
            "    set: [table.storage.latency_ms=200]\n",
        )
    )
    (entry,) = suite.entries
    assert entry.id == "smoke" and entry.scenario.table.storage.latency_ms == 200


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: s\nscenarios:\n  - scenario: x.yaml\n    repeats: 2\n", "scenarios.0.repeats"),
        ("name: s\nscenario: []\n", "scenario"),
        ("name: Bad Name\nscenarios: []\nbenchmarks: {path: .}\n", "name"),
        ("name: s\nscenarios:\n  - scenario: missing.yaml\n", "missing.yaml"),
        ("name: s\n", "at least one scenario"),
        ("name: s\nbenchmarks: {path: nowhere}\n", "benchmarks.path"),
        ("name: s\ndetector: {min_history: 1}\n", "detector.min_history"),
        (
            f"name: s\nscenarios:\n  - {{scenario: {SMOKE}, set: [engine.writerz=3]}}\n",
            "engine.writerz",
        ),
        (
            f"name: s\nscenarios:\n  - scenario: {SMOKE}\n  - scenario: {SMOKE}\n",
            "share the id smoke",
        ),
        ("name: s\nname: t\n", "duplicate key"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    path = _suite(tmp_path, text)
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_an_included_suite_s_entries_run_after_the_suite_s_own_and_a_cycle_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "inner.yaml").write_text(
        f"name: inner\nscenarios:\n  - {{scenario: {SMOKE}, id: inner-smoke}}\n"
    )
    outer = tmp_path / "outer.yaml"
    outer.write_text(f"name: outer\nscenarios:\n  - {{scenario: {SMOKE}}}\ninclude: [inner.yaml]\n")
    assert [e.id for e in load_suite(outer).entries] == ["smoke", "inner-smoke"]
    (tmp_path / "inner.yaml").write_text("name: inner\ninclude: [outer.yaml]\n")
    with pytest.raises(SuiteError, match=r"include\.0: outer\.yaml includes this suite again"):
        load_suite(outer)
    (tmp_path / "inner.yaml").write_text(f"name: inner\nscenarios:\n  - {{scenario: {SMOKE}}}\n")
    with pytest.raises(SuiteError, match="two entries share the id smoke"):
        load_suite(outer)
