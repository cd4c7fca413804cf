"""A scenario names its system under test; `validate` keeps it to what that system can do
and says why not (DESIGN.md "Systems under test": capabilities)."""

import pytest

from harness.scenario import ScenarioError, validate_scenario
from harness.scenario.matrix import expand_matrix
from harness.scenario.model import DEFAULT_CHECKS


def _hudi(**sections: object) -> dict:
    return {"name": "h", "system": {"kind": "hudi"}, **sections}


def _problem(data: dict) -> str:
    with pytest.raises(ScenarioError) as info:
        validate_scenario(data)
    return str(info.value)


def test_the_engine_is_the_default_system_with_its_own_checks() -> None:
    s = validate_scenario({"name": "e"})
    assert s.system.kind == "instantbench" and s.system.version is None
    assert tuple(s.checks) == DEFAULT_CHECKS


def test_hudi_gets_the_checks_that_can_judge_it_unless_checks_are_given() -> None:
    assert validate_scenario(_hudi()).checks == [
        "exactly_once",
        "unique_keys",
        "timeline",
        "isolation",
    ]
    assert validate_scenario(_hudi(checks=["exactly_once"])).checks == ["exactly_once"]
    bank = validate_scenario(_hudi(source={"mode": "bank"}))  # bank only where it applies
    assert bank.checks == ["exactly_once", "unique_keys", "timeline", "isolation", "bank"]


def test_hudi_batch_writers_transfer_under_a_lock_hudi_has() -> None:
    transfers = {"count": 2, "op": "transfer"}
    ok = validate_scenario(
        _hudi(
            source={"mode": "bank"},
            batch_writers=transfers,
            engine={"lock": {"provider": "zookeeper"}},
        )
    )
    assert ok.batch_writers.count == 2
    service = _problem(
        _hudi(
            source={"mode": "bank"},
            batch_writers=transfers,
            engine={"lock": {"provider": "service"}},
        )
    )
    assert "engine.lock.provider" in service and "allowed: zookeeper, file" in service
    upserts = _problem(_hudi(batch_writers={"count": 1, "op": "upsert"}))
    assert (
        "batch_writers.op" in upserts and "MERGE INTO" in upserts and "allowed: transfer" in upserts
    )


def test_a_fault_that_cannot_act_on_hudi_is_refused_with_the_reason() -> None:
    text = _problem(_hudi(faults=[{"kind": "drop_ack", "at_s": 5}]))
    assert "faults.0.kind: drop_ack cannot act on hudi" in text
    assert "no checkpoint ACK" in text and "allowed: coordinator_crash" in text


def test_a_crash_point_inside_the_engine_is_refused_for_hudi() -> None:
    crash = {"kind": "coordinator_crash", "at_s": 5, "point": "after_ack_before_commit"}
    text = _problem(_hudi(faults=[crash]))
    assert "faults.0.point" in text and "allowed: mid_commit, after_commit" in text
    ok = validate_scenario(_hudi(faults=[{**crash, "point": "after_commit"}]))
    assert ok.faults[0].point == "after_commit"


@pytest.mark.parametrize(
    ("sections", "key"),
    [
        ({"checks": ["hudi_reader"]}, "checks: hudi_reader cannot judge hudi"),
        ({"source": {"mode": "append"}, "checks": ["bank"]}, "bank"),
        ({"batch_writers": {"count": 5, "op": "transfer"}}, "batch_writers.count"),
        ({"system": {"kind": "hudi", "version": "0.15.0"}}, "allowed: 1.2.0"),
    ],
)
def test_what_hudi_cannot_do_yet_is_refused_by_key(sections: dict, key: str) -> None:
    assert key in _problem(_hudi(**sections))


def test_a_hudi_writer_task_dies_before_it_writes_a_file() -> None:
    crash = {"kind": "writer_crash", "at_s": 5, "target": "writer:1"}
    text = _problem(_hudi(faults=[crash]))  # the default point, mid_flush, is the engine's
    assert "faults.0.point" in text and "Hudi writes them in its JVM" in text
    assert "allowed: before_flush" in text
    ok = validate_scenario(_hudi(faults=[{**crash, "point": "before_flush"}]))
    assert ok.faults[0].point == "before_flush"


def test_hudi_runs_on_a_cluster_of_its_runtime_and_takes_worker_faults() -> None:
    kill = {"kind": "worker_kill", "at_s": 5, "target": "worker:1"}
    cluster = {"backend": "standalone", "workers": 2, "cores_per_worker": 1}
    ok = validate_scenario(_hudi(cluster=cluster, faults=[kill, {**kill, "kind": "worker_pause"}]))
    assert [f.kind for f in ok.faults] == ["worker_kill", "worker_pause"]
    assert "faults.0" in _problem(_hudi(faults=[kill]))  # local mode has no worker to kill
    docker = validate_scenario(_hudi(cluster={**cluster, "backend": "docker"}))
    assert docker.cluster.backend == "docker"


def test_the_engine_takes_no_version() -> None:
    assert "system.version" in _problem({"name": "e", "system": {"version": "1.0"}})


def test_a_system_axis_gives_each_variant_its_own_version_and_checks() -> None:
    hudi_base = validate_scenario(
        _hudi(
            system={"kind": "hudi", "version": "1.2.0"},
            matrix={"system.kind": ["hudi", "instantbench"]},
        )
    )
    (_, hudi), (name, engine) = expand_matrix(hudi_base)
    assert (hudi.system.version, engine.system.version) == ("1.2.0", None)
    assert name == "kind-instantbench" and tuple(engine.checks) == DEFAULT_CHECKS
    assert hudi.checks == ["exactly_once", "unique_keys", "timeline", "isolation"]
    # Checks the file names stay for every side (they must suit both systems).
    chosen = validate_scenario(
        {
            "name": "e",
            "checks": ["exactly_once"],
            "matrix": {"system.kind": ["instantbench", "hudi"]},
        }
    )
    assert [v.checks for _, v in expand_matrix(chosen)] == [["exactly_once"], ["exactly_once"]]


def test_hudi_skews_its_stream_driver_s_clock_by_an_offset_a_jump_or_a_drift() -> None:
    step = {"kind": "clock_skew", "at_s": 5, "target": "coordinator", "jump_ms": -10000}
    assert validate_scenario(_hudi(faults=[step])).faults[0].kind == "clock_skew"
    writers = _problem(_hudi(faults=[{**step, "target": "batch_writer:0"}]))
    assert "faults.0.target" in writers and "allowed: coordinator" in writers
    drift = {"kind": "clock_skew", "at_s": 5, "drift_ppm": 500}
    assert validate_scenario(_hudi(faults=[drift])).faults[0].drift_ppm == 500
    slow = _problem(_hudi(faults=[{**drift, "drift_ppm": -500}]))
    assert "faults.0.drift_ppm" in slow and "back (a jump" in slow and "allowed: >= 0" in slow


def test_a_hudi_lock_holder_pause_needs_the_zookeeper_lock_and_a_seam_seen_from_outside() -> None:
    def pause(point: str, provider: str = "zookeeper") -> dict:
        return _hudi(
            source={"mode": "bank"},
            batch_writers={"count": 2, "op": "transfer"},
            engine={"lock": {"provider": provider}},
            faults=[{"kind": "batch_writer_pause", "at_s": 4, "point": point}],
        )

    for point in ("lock_held", "commit_before_completed"):
        assert validate_scenario(pause(point)).faults[0].point == point
    inside = _problem(pause("instant_before_requested"))
    assert "faults.0.point" in inside and "allowed: lock_held, commit_before_completed" in inside
    assert "allowed: lock_held" in _problem(pause("random"))
    file_lock = _problem(pause("lock_held", "file"))
    assert "engine.lock.provider" in file_lock and "no session to expire" in file_lock
    assert "allowed: zookeeper (got 'file')" in file_lock


def test_the_engine_s_batch_writers_stop_at_named_seams_not_at_lock_held() -> None:
    engine = {
        "name": "e",
        "batch_writers": {"count": 1},
        "faults": [{"kind": "batch_writer_pause", "at_s": 4, "point": "lock_held"}],
    }
    text = _problem(engine)
    assert "faults.0.point" in text and "named seam" in text


def test_mid_retry_is_a_hudi_crash_point_the_engine_refuses() -> None:
    crash = {"kind": "coordinator_crash", "at_s": 5, "point": "mid_retry"}
    assert validate_scenario(_hudi(faults=[crash])).faults[0].point == "mid_retry"
    text = _problem({"name": "e", "faults": [crash]})
    assert "faults.0.point" in text and "retries a failed batch" in text


@pytest.mark.parametrize("kind", ["delta", "iceberg"])
def test_a_table_format_takes_cow_appends_and_a_kill_between_commits_and_says_why_not_more(
    kind: str,
) -> None:
    """Delta and Iceberg through their own Spark sinks: the default checks, a COW table,
    the after_commit kill, bank streams; merge-on-read, ACK faults and batch writers on a
    local folder refused, each with the reason; Iceberg's upserts refused (no idempotent
    foreachBatch write)."""
    base = {"name": "f", "system": {"kind": kind}, "table": {"type": "cow"}}
    crash = [{"kind": "coordinator_crash", "at_s": 8, "point": "after_commit"}]
    s = validate_scenario({**base, "faults": crash})
    assert s.checks == ["exactly_once", "unique_keys", "timeline", "isolation"]
    mor = _problem({**base, "table": {"type": "mor"}})
    assert (
        "table.type: " in mor
        and "merge-on-read" in mor
        and mor.endswith("allowed: cow (got 'mor')")
    )
    ack = _problem({**base, "faults": [{"kind": "drop_ack", "at_s": 5}]})
    assert "drop_ack cannot act on" in ack and "commits inside the micro-batch" in ack
    point = _problem({**base, "faults": [{**crash[0], "point": "mid_commit"}]})
    assert "faults.0.point" in point and "after_commit" in point
    # Batch writers: the refusal names the documented unsafety, not only "not built"
    # (Iceberg's, of its default catalog: test_iceberg_batch_writers_need_the_catalog_...).
    writers = _problem({**base, "batch_writers": {"count": 1, "op": "transfer"}})
    unsafe = {"delta": "within one JVM only (HDFSLogStore)", "iceberg": "check-then-rename"}
    assert unsafe[kind] in writers and "several" in writers
    if kind == "delta":
        assert "batch_writers.count" in writers and "allowed: at most 0" in writers
    bank = validate_scenario({**base, "source": {"mode": "bank"}})
    assert bank.checks[-1] == "bank"  # the stream's legs after the opening balances
    upsert = {**base, "source": {"mode": "upsert", "keys": 100}}
    if kind == "delta":
        assert validate_scenario(upsert).source.mode == "upsert"
    else:
        assert "apache/iceberg#8809" in _problem(upsert)
    version = _problem({**base, "system": {"kind": kind, "version": "0.1"}})
    assert "system.version" in version and "allowed:" in version


def _iceberg(catalog: str | None, **sections: object) -> dict:
    system = {"kind": "iceberg", **({"catalog": catalog} if catalog else {})}
    return {"name": "i", "system": system, "source": {"mode": "bank"}, **sections}


def test_iceberg_batch_writers_need_the_catalog_that_serialises_commits() -> None:
    """Iceberg documents its hadoop catalog as safe for one writing process; the JDBC
    catalog's row update serialises commits across processes."""
    writers = {"count": 2, "op": "transfer"}
    ok = validate_scenario(_iceberg("jdbc", batch_writers=writers))
    assert (ok.system.catalog, ok.batch_writers.count) == ("jdbc", 2)
    assert "bank" in ok.checks
    for catalog in ("hadoop", None):  # named, or the default
        refused = _problem(_iceberg(catalog, batch_writers=writers))
        assert "system.catalog" in refused and "check-then-rename" in refused
        assert "allowed: jdbc" in refused
    assert validate_scenario(_iceberg(None)).system.catalog is None  # one writer: fine
    lock = _problem(
        _iceberg("jdbc", batch_writers=writers, engine={"lock": {"provider": "zookeeper"}})
    )
    assert "engine.lock.provider" in lock and "takes no lock provider" in lock


def test_a_catalog_is_iceberg_s_to_choose() -> None:
    delta = _problem({"name": "d", "system": {"kind": "delta", "catalog": "jdbc"}})
    assert "system.catalog" in delta and "delta has no catalog to choose" in delta
    engine = _problem({"name": "e", "system": {"catalog": "jdbc"}})
    assert "system.catalog" in engine and "leave it out" in engine


def test_min_commits_is_the_engine_runner_s_alone() -> None:
    assert validate_scenario({"name": "e", "min_commits": 6}).min_commits == 6
    problem = _problem(_hudi(min_commits=3))
    assert "min_commits" in problem and "system.kind instantbench" in problem
    assert "min_commits" in _problem({"name": "e", "min_commits": -1})
