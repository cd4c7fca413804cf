"""Scenario loading: good files, keyed errors for bad ones, --set overrides, matrix."""

from pathlib import Path

import pytest

from harness.scenario import ScenarioError, expand_matrix, load_scenario, validate_scenario

GOOD = """\
name: blocking-vs-async
seed: 42
warmup_s: 10
duration_s: 60
cluster: {backend: local, workers: 2, cores_per_worker: 1}
table:   {type: cow, key: id, file_groups: 8, index: bucket, storage: {latency_ms: 0},
          compaction: {every_s: 0}}
source:
  mode: append
  rate: {shape: constant, rows_per_s: 20000}
  keys: 100000
  accounts: 8
  payload_bytes: 100
engine:
  instant_mode: async
  sink: engine
  checkpoint_interval_s: 2
  writers: 2
  write_batch_rows: 50000
  truetime: {max_skew_ms: 200}
  commit_ack_timeout_s: 60
  safety: {occ: true, pk_check: true, put_if_absent: true, strict_monotonic: true,
           completion_time_slicing: true, subsume_acks: true,
           coordinator_state: true, fencing: true}
batch_writers:
  count: 0
  every_s: 1
  op: upsert
  rows_per_commit: 1000
faults:
  - {kind: writer_crash, at_s: 20, target: "writer:1", point: mid_flush}
  - {kind: drop_ack, at_s: 30, count: 2}
  - {kind: clock_skew, at_s: 40, duration_s: 15, target: coordinator, offset_ms: -500}
  - {kind: coordinator_crash, at_s: 50, point: after_ack_before_commit}
readers: {concurrent: 1, every_s: 5}
checks: [exactly_once, timeline, unique_keys, isolation]
slo: {freshness_p99_s: 10}
matrix: {engine.instant_mode: [blocking, async]}
repeat: 3
"""


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.yaml"
    path.write_text(GOOD)
    return path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


def error_of(path: Path, overrides: list[str] | None = None) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, overrides or [])
    return str(info.value)


# --- good input -------------------------------------------------------------------------


def test_the_design_example_loads_with_its_values(good: Path) -> None:
    s = load_scenario(good)
    assert s.name == "blocking-vs-async"
    assert s.engine.instant_mode == "async"
    assert s.engine.safety.fencing and s.engine.safety.truetime_wait  # default for new switch
    assert [f.kind for f in s.faults] == [
        "writer_crash",
        "drop_ack",
        "clock_skew",
        "coordinator_crash",
    ]
    assert s.faults[2].offset_ms == -500
    assert s.run_s == 70
    assert s.repeat == 3


def test_a_minimal_file_gets_the_design_defaults(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, "name: tiny\n"))
    assert (s.seed, s.warmup_s, s.duration_s) == (42, 10, 60)
    assert s.source.rate.shape == "constant" and s.source.rate.rows_per_s == 20000
    assert s.engine.writers == 2 and s.engine.truetime.max_skew_ms == 200
    assert s.faults == [] and s.matrix == {} and s.repeat == 1
    assert "bank" not in s.checks


def test_to_yaml_round_trips(good: Path, tmp_path: Path) -> None:
    s = load_scenario(good)
    again = load_scenario(write(tmp_path, s.to_yaml()))
    assert again.model_dump() == s.model_dump()


def test_get_reads_dotted_keys(good: Path) -> None:
    s = load_scenario(good)
    assert s.get("engine.instant_mode") == "async"
    assert s.get("engine.safety.occ") is True
    assert s.get("faults.2.offset_ms") == -500
    with pytest.raises(KeyError, match=r"did you mean `engine\.writers`"):
        s.get("engine.writer")


@pytest.mark.parametrize(
    "rate",
    [
        "{shape: steps, steps: [{at_s: 0, rows_per_s: 100}, {at_s: 10, rows_per_s: 1000}]}",
        "{shape: ramp, from_rows_per_s: 0, to_rows_per_s: 1000, duration_s: 30}",
        "{shape: spike, base_rows_per_s: 100, peak_rows_per_s: 1000, at_s: 20, duration_s: 5}",
        "{shape: unbounded, rows_per_batch: 100000}",
    ],
)
def test_every_rate_shape_loads(tmp_path: Path, rate: str) -> None:
    s = load_scenario(write(tmp_path, f"name: r\nsource: {{rate: {rate}}}\n"))
    assert s.source.rate.shape in rate


def test_bank_check_with_bank_mode_loads(tmp_path: Path) -> None:
    text = (
        "name: b\nsource: {mode: bank}\nchecks: [bank]\nbatch_writers: {count: 2, op: transfer}\n"
    )
    assert load_scenario(write(tmp_path, text)).checks == ["bank"]


def test_worker_faults_load_on_cluster_backends(tmp_path: Path) -> None:
    text = (
        "name: w\ncluster: {backend: standalone, workers: 2}\n"
        "faults: [{kind: worker_kill, at_s: 20, target: 'worker:1'},"
        " {kind: worker_pause, at_s: 30, duration_s: 5}]\n"
    )
    assert [f.kind for f in load_scenario(write(tmp_path, text)).faults] == [
        "worker_kill",
        "worker_pause",
    ]


def test_random_worker_targets_are_cluster_workers() -> None:
    from harness.faults.schedule import expand, parse_fault

    faults = [{"kind": "worker_kill", "at_s": 1, "target": "random", "every_s": 1}]
    targets = {o.target for o in expand(map(parse_fault, faults), 3, 40, writers=4, workers=2)}
    assert targets == {"worker:1", "worker:2"}
    crash = [{"kind": "writer_crash", "at_s": 1, "target": "random", "every_s": 1}]
    assert {o.target for o in expand(map(parse_fault, crash), 3, 40, writers=2, workers=2)} == {
        "writer:0",
        "writer:1",
    }


# --- bad input: every message names the file, the key and what is allowed ----------------

BAD = [
    # (replace this, with this, key in message, allowed text in message)
    (
        "  instant_mode: async",
        "  instant_mode: asyn",
        "engine.instant_mode",
        "'async' or 'blocking'",
    ),
    ("  instant_mode: async", "  instat_mode: async", "engine.instat_mode", "engine.instant_mode"),
    ("seed: 42", "sed: 42", "sed", "did you mean `seed`"),
    ("  writers: 2", "  writers: two", "engine.writers", "must be an integer"),
    ("  writers: 2", "  writers: 0", "engine.writers", "allowed: 1 <= writers <= 64"),
    # Types are strict: a YAML bool or a quoted number is not silently converted.
    ("  writers: 2", "  writers: yes", "engine.writers", "must be an integer (got True)"),
    ("duration_s: 60", 'duration_s: "60"', "duration_s", "must be a number (got '60')"),
    ("duration_s: 60", "duration_s: .nan", "duration_s", "finite number"),
    ("  writers: 2", "  writers: 2.0", "engine.writers", "without a decimal point"),
    # Far outside any sensible range: both bounds are named.
    ("duration_s: 60", "duration_s: 1e12", "duration_s", "allowed: 1 <= duration_s <= 86400"),
    ("rows_per_s: 20000", "rows_per_s: -5", "source.rate.rows_per_s", "0 < rows_per_s <= 1000"),
    ("  writers: 2", "  writers: 100000", "engine.writers", "1 <= writers <= 64"),
    ("checkpoint_interval_s: 2", "checkpoint_interval_s: 0", "checkpoint_interval_s", "0.1 <="),
    ("file_groups: 8", "file_groups: 0", "table.file_groups", "1 <= file_groups <= 4096"),
    ("payload_bytes: 100", "payload_bytes: 1000000000000", "source.payload_bytes", "1048576"),
    ("count: 2}", "count: 0}", "faults.1.count", "1 <= count <= 10000"),
    ("offset_ms: -500", "offset_ms: 1e12", "faults.2.offset_ms", "<= 86400000"),
    ("max_skew_ms: 200", "max_skew_ms: 1e9", "engine.truetime.max_skew_ms", "<= 60000"),
    ("latency_ms: 0", "latency_ms: 1e9", "table.storage.latency_ms", "<= 60000"),
    ("repeat: 3", "repeat: 0", "repeat", "1 <= repeat"),
    ("seed: 42", "seed: -1", "seed", "0 <= seed"),
    # Empty strings where a name is needed.
    ("name: blocking-vs-async", "name: ''", "name", "text matching"),
    ("name: blocking-vs-async", "name:", "name", "must be text (got an empty value)"),
    ("key: id", "key: ''", "table.key", "allowed: 'id'"),
    ("compaction: {every_s: 0}}", "compaction: {every_s: 0}, path: ''}", "table.path", "empty"),
    ("name: blocking-vs-async", "name: Blocking_vs", "name", "[a-z0-9-]+"),
    ("name: blocking-vs-async\n", "", "name", "required"),
    ("kind: drop_ack", "kind: drop_acks", "faults.1.kind", "'drop_ack'"),
    ("{kind: drop_ack, at_s: 30, count: 2}", "{at_s: 30}", "faults.1.kind", "'drop_ack'"),
    ("point: mid_flush", "point: mid_commit", "faults.0.point", "'mid_flush'"),
    ("point: after_ack_before_commit", "point: mid_flush", "faults.3.point", "'mid_commit'"),
    ("count: 2}", "count: 2, offset_ms: 5}", "faults.1.offset_ms", "allowed here"),
    ("offset_ms: -500", "offset_ms: -500, jump_ms: 3", "faults.2", "exactly one of"),
    (", offset_ms: -500", "", "faults.2", "exactly one of"),
    ('target: "writer:1"', 'target: "writer:7"', "faults.0.target", "writer:0 .. writer:1"),
    ('target: "writer:1"', 'target: "worker:1"', "faults.0.target", "writer:N | random"),
    (
        "target: coordinator, offset_ms",
        "target: 'worker:1', offset_ms",
        "faults.2.target",
        "allowed: coordinator | batch_writer:N | all",
    ),
    ("at_s: 50", "at_s: 70", "faults.3.at_s", "0 <= at_s < 70"),
    ("duration_s: 15", "duration_s: 45", "faults.2.duration_s", "at most 30"),
    (
        "  count: 0\n  every_s: 1\n  op: upsert",
        "  count: 1\n  op: transfer",
        "batch_writers.op",
        "upsert, insert",
    ),
    ("unique_keys, isolation]", "unique_keys, bank]", "checks", "source.mode: bank"),
    ("every_s: 0}}", "every_s: 5}}", "table.compaction.every_s", "table.type mor"),
    (
        "engine.instant_mode: [",
        "engine.instant_mod: [",
        "matrix.engine.instant_mod",
        "did you mean",
    ),
    ("[blocking, async]", "[blocking, asynch]", "engine.instant_mode", "matrix variant"),
    ("shape: constant, rows_per_s: 20000", "shape: steps", "source.rate.steps", "required"),
    ("shape: constant", "shape: poisson", "source.rate.shape", "'constant'"),
    ("repeat: 3", "repeat: 3\nrepeat: 4", "repeat", "duplicate key"),
]


@pytest.mark.parametrize(("old", "new", "key", "allowed"), BAD)
def test_bad_input_names_file_key_and_allowed(
    tmp_path: Path, old: str, new: str, key: str, allowed: str
) -> None:
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    message = error_of(path)
    assert str(path) in message
    assert key in message
    assert allowed in message


def test_a_fault_the_backend_cannot_apply(tmp_path: Path) -> None:
    text = GOOD.replace("count: 2}", "count: 2}\n  - {kind: worker_kill, at_s: 25}")
    message = error_of(write(tmp_path, text))
    assert "faults.2.kind" in message
    assert "worker_kill cannot be applied on cluster.backend 'local'" in message
    assert "standalone, docker" in message


def test_unknown_key_error_shows_the_bad_value(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, GOOD.replace("  writers: 2", "  writerz: 2")))
    assert "(got 2)" in message and "engine.writers" in message


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    text = GOOD.replace("seed: 42", "sed: 42").replace("  writers: 2", "  writers: -1")
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    assert {p.key for p in info.value.problems} == {"sed", "engine.writers"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("name: [unclosed\n", "not valid YAML"), ("- a\n- b\n", "YAML mapping")],
)
def test_unparseable_files(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    message = error_of(path)
    assert str(path) in message and expected in message


def test_a_missing_file(tmp_path: Path) -> None:
    assert "cannot read the file" in error_of(tmp_path / "nope.yaml")


# --- --set overrides ---------------------------------------------------------------------


def test_overrides_scalars_nested_and_lists(good: Path) -> None:
    s = load_scenario(
        good,
        [
            "engine.instant_mode=blocking",
            "engine.safety.occ=false",
            "engine.truetime.max_skew_ms=5",
            "checks=[exactly_once, timeline]",
            "faults.0.at_s=25",
            "source.rate={shape: ramp, from_rows_per_s: 0, to_rows_per_s: 10}",
            "table.path=/tmp/x=y",  # only the first '=' splits
        ],
    )
    assert s.engine.instant_mode == "blocking"
    assert s.engine.safety.occ is False
    assert s.engine.truetime.max_skew_ms == 5
    assert s.checks == ["exactly_once", "timeline"]
    assert s.faults[0].at_s == 25
    assert s.source.rate.shape == "ramp"
    assert s.table.path == "/tmp/x=y"


def test_override_creates_missing_sections(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, "name: tiny\ntable:\n"), ["table.storage.latency_ms=7"])
    assert s.table.storage.latency_ms == 7


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("engine.instat_mode=blocking", "did you mean `engine.instant_mode`"),
        ("engine.instant_mode=fast", "'async' or 'blocking'"),
        ("seed.x=1", "takes no keys below it"),
        ("faults.9.at_s=1", "index out of range"),
        ("no-equals-sign", "expected KEY=VALUE"),
    ],
)
def test_bad_overrides(good: Path, override: str, expected: str) -> None:
    message = error_of(good, [override])
    assert str(good) in message and expected in message


# --- matrix --------------------------------------------------------------------------------


def test_matrix_expands_to_named_resolved_variants(good: Path) -> None:
    variants = expand_matrix(load_scenario(good))
    assert [name for name, _ in variants] == ["instant-mode-blocking", "instant-mode-async"]
    assert [v.engine.instant_mode for _, v in variants] == ["blocking", "async"]
    assert all(v.matrix == {} for _, v in variants)


def test_matrix_is_a_cartesian_product_in_key_order(good: Path) -> None:
    s = load_scenario(good, ["matrix={engine.writers: [2, 4], table.type: [cow, mor]}"])
    variants = expand_matrix(s)
    assert [n for n, _ in variants] == [
        "writers-2-type-cow",
        "writers-2-type-mor",
        "writers-4-type-cow",
        "writers-4-type-mor",
    ]
    assert (variants[3][1].engine.writers, variants[3][1].table.type) == (4, "mor")


def test_a_matrix_list_is_its_variants_in_order(good: Path) -> None:
    points = "[{engine.instant_mode: blocking}, {engine.instant_mode: async, engine.writers: 4}]"
    variants = expand_matrix(load_scenario(good, [f"matrix={points}"]))
    assert [n for n, _ in variants] == ["instant-mode-blocking", "instant-mode-async-writers-4"]
    assert [(v.engine.instant_mode, v.engine.writers) for _, v in variants] == [
        ("blocking", 2),
        ("async", 4),
    ]


def test_a_matrix_list_names_the_variant_of_a_bad_key(good: Path) -> None:
    message = error_of(good, ["matrix=[{engine.writers: 2}, {engine.writerz: 4}]"])
    assert "matrix.1.engine.writerz" in message and "did you mean `engine.writers`?" in message
    assert "matrix.0.name" in error_of(good, ["matrix=[{name: a}]"])
    assert "matrix" in error_of(good, ["matrix=[{}]"])  # a variant changes something


def test_no_matrix_is_one_unnamed_variant(good: Path) -> None:
    s = load_scenario(good, ["matrix={}"])
    assert expand_matrix(s) == [("", s)]


def test_a_matrix_value_that_breaks_a_rule_names_the_variant(good: Path) -> None:
    message = error_of(good, ["matrix={engine.writers: [1, 2]}"])
    assert "faults.0.target" in message and "matrix variant engine.writers=1" in message


def test_matrix_may_not_vary_its_name(good: Path) -> None:
    assert "cannot be varied" in error_of(good, ["matrix={name: [a, b]}"])


def test_validate_scenario_names_its_source() -> None:
    with pytest.raises(ScenarioError, match="--axis: seed"):
        validate_scenario({"name": "x", "seed": "many"}, "--axis")
