"""The order of generation that the timeline check judges comes from the engine's generation
sequence, which no clock fault moves: several OS processes (a coordinator-like writer and
batch writers) skew, drift and jump their clocks back and forth while generating requested,
completion and rollback times; the recorded sequence stays the true order of generation."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from engine.config import Safety, TableConfig
from engine.errors import CorruptInstantError
from engine.table import Table
from harness.checks import timeline
from harness.runner.final_state import _last_generated, _timeline_instants


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "table")


# One child process = one writer. Every generation is logged by a wrapper around the
# generator while the table lock is held (the engine always generates under it), so the
# log's line order is the true order of generation across all processes.
CHILD = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    from engine.clock import AdjustableClock
    from engine.config import Safety
    from engine.table import Table

    path, me, log, strict, steps = sys.argv[1:6]
    me = int(me)
    clock = AdjustableClock()
    t = Table.open(path, writer_id=f"p{me}", clock=clock,
                   max_skew_ms=1, heartbeat_interval_s=0,
                   safety=Safety(strict_monotonic=strict == "1", occ=False))
    generate = t.generator.generate_stamped

    def logged(**kw):
        g = generate(**kw)
        with open(log, "a") as f:  # still under the table lock
            f.write(f"{g.seq} {g.time} p{me}\\n")
        return g

    t.generator.generate_stamped = logged
    for n, step in enumerate(steps.split(",")):
        kind, _, value = step.partition("=")
        if kind == "offset":
            clock.set_offset_ms(float(value))
        elif kind == "drift":
            clock.set_drift_ppm(float(value))
        elif kind == "jump":
            clock.jump_ms(float(value))
        if value:  # the generations below this line read the faulted clock
            with open(log, "a") as f:
                f.write(f"fault {kind} p{me}\\n")
        tx = t.transaction()
        try:
            with tx:
                # Inserts (a new file group each): with OCC off, concurrent upserts of one
                # group would lose updates, which the timeline's stale_base rule reports.
                tx.write(pa.table({"id": [me * 1000 + n], "v": [me]}), op="insert")
                if kind == "abort":
                    raise RuntimeError("aborted on purpose")  # rolled back
        except RuntimeError:
            pass
    t.close()
    """
)

HOUR = 3_600_000


def _faults(offset: int) -> str:
    """Each step applies its clock fault (if any), then runs one transaction: an offset, a
    frozen clock (drift -1e6 ppm), a fast one, a jump back an hour and two forward, the
    opposite offset, and an aborted transaction (its rollback generates times too)."""
    steps = [f"offset={offset}", "commit", "drift=-1000000", "commit", "abort"]
    steps += ["drift=2000000", f"jump={-HOUR}", "commit", f"jump={2 * HOUR}", "commit"]
    return ",".join([*steps, f"offset={-offset}", "commit"])


def _run(path: str, log: Path, strict: bool, steps: list[str]) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, path, str(i), str(log), "1" if strict else "0", s],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, s in enumerate(steps)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err


def _check(path: str):
    t = Table.open(path)
    instants = _timeline_instants(t)
    return instants, timeline(instants, None, _last_generated(t))


def _log(log: Path) -> list[tuple[int, str]]:
    lines = [ln.split() for ln in log.read_text().splitlines()]
    return [(int(seq), time) for seq, time, *_ in (ln for ln in lines if ln[0] != "fault")]


def _recorded(instants) -> dict[int, str]:
    return {g["seq"]: g["time"] for i in instants for g in i["generated"]}


def test_the_sequence_is_the_true_order_under_every_clock_fault(table_path, tmp_path):
    Table.create(table_path, TableConfig(file_groups=2), max_skew_ms=0).close()
    log = tmp_path / "generations.log"
    steps = [_faults(o) for o in (0, 200, -200)]  # coordinator-like writer, batch writers
    _run(table_path, log, strict=True, steps=steps)
    generations = _log(log)
    # In the true order (the log) the numbers count up one by one: no fault reordered them.
    assert [s for s, _ in generations] == list(range(1, len(generations) + 1))
    instants, result = _check(table_path)
    recorded = _recorded(instants)
    assert recorded and all(generations[s - 1] == (s, time) for s, time in recorded.items())
    # Times the table kept: every requested/completion time, rollbacks and what they removed.
    assert len(recorded) == len(generations)
    assert result.verdict == "valid", result.evidence
    assert result.evidence["generation_order"]["numbered"] == len(generations)


def test_a_backward_jump_without_strict_times_is_caught_by_order(table_path, tmp_path):
    Table.create(table_path, TableConfig(file_groups=2), max_skew_ms=0).close()
    log = tmp_path / "generations.log"
    # A batch writer with a skewed clock commits, then the coordinator-like writer commits,
    # steps its clock back an hour and commits once more. One after the other: two processes
    # generating at once without strict times could also pick equal times (a duplicate, a
    # violation of its own), and this test shows a violation by order alone.
    _run(table_path, log, strict=False, steps=["offset=-200,commit,commit"])
    _run(table_path, log, strict=False, steps=[f"commit,commit,jump={-HOUR}"])
    lines = log.read_text().splitlines()
    after_jump = lines[lines.index("fault jump p0") + 1 :]
    first_after = next(ln.split()[1] for ln in after_jump if ln.endswith(" p0"))
    _, result = _check(table_path)
    assert result.verdict == "invalid"
    ev = result.evidence
    # The requested and the completion time after the jump, each below the time before it.
    first, second = ev["not_increasing"]["items"]
    assert first["time"] == first_after and first["kind"] == "requested"
    assert second["kind"] == "completion" and first["not_after"] == second["not_after"]
    assert first["not_after"]["time"] > second["time"] > first["time"]
    others = [k for k, v in ev.items() if isinstance(v, dict) and v.get("count")]
    assert others == ["not_increasing"], others  # invalid because of the order alone


def test_missing_sequence_numbers_make_the_order_unknown(table_path):
    t = Table.create(table_path, TableConfig(file_groups=2), max_skew_ms=0)
    for n in range(2):
        with t.transaction() as tx:
            tx.write(pa.table({"id": [n], "v": [n]}))
    # A table written before sequences: strip the numbers from a completed instant's file.
    done = t.timeline.reload().completed()[0]
    path = f".hoodie/timeline/{done.file_name}"
    meta = t.timeline.read_metadata(done)
    stripped = dataclasses.replace(meta, requested_seq=None, completion_seq=None)
    t.storage.write_bytes(path, stripped.to_avro_bytes())
    _, result = _check(table_path)
    assert result.verdict == "unknown" and "no sequence number" in result.evidence["reason"]


def test_a_corrupt_generation_store_is_never_valid(table_path):
    t = Table.create(table_path, TableConfig(file_groups=2), max_skew_ms=0)
    with t.transaction() as tx:
        tx.write(pa.table({"id": [1], "v": [1]}))
    t.storage.write_bytes(".hoodie/.truetime", b"\\x00garbage")
    _, result = _check(table_path)
    assert result.verdict == "unknown" and "unreadable" in result.evidence["reason"]
    # The engine refuses to guess a lost count, strict or not.
    for strict in (True, False):
        other = Table.open(table_path, safety=Safety(strict_monotonic=strict), max_skew_ms=0)
        with pytest.raises(CorruptInstantError, match="truetime"):
            other.start_instant()
    # A record lost and restarted (by a process that had not counted yet) makes numbers
    # repeat: contradictory evidence, unknown too.
    t.storage.delete(".hoodie/.truetime")
    fresh = Table.open(table_path, max_skew_ms=0)
    with fresh.transaction() as tx:
        tx.write(pa.table({"id": [2], "v": [2]}))
    _, result = _check(table_path)
    assert result.verdict == "unknown" and "more than one time" in result.evidence["reason"]


def test_compactions_and_rollbacks_number_their_times_too(table_path):
    t = Table.create(table_path, TableConfig(table_type="mor", file_groups=1), max_skew_ms=0)
    for n in range(2):
        with t.transaction() as tx:
            tx.write(pa.table({"id": [n], "v": [n]}))
    t.run_compaction(t.schedule_compaction())
    t.rollback(t.start_instant())
    instants, result = _check(table_path)
    by_action = {i["action"]: i["generated"] for i in instants}
    assert all(g["seq"] is not None for i in instants for g in i["generated"])
    assert [g["kind"] for g in by_action["compaction"]] == ["requested", "completion"]
    assert [g["kind"] for g in by_action["rollback"]] == ["requested", "completion", "requested"]
    assert result.verdict == "valid", result.evidence
    assert result.evidence["generation_order"]["numbered"] == 2 * 2 + 2 + 1 + 2


def test_a_store_from_before_sequences_starts_counting(table_path):
    t = Table.create(table_path, TableConfig(file_groups=1), max_skew_ms=0)
    t.storage.write_bytes(".hoodie/.truetime", b"20260101000000000")  # the old bare time
    with t.transaction() as tx:
        tx.write(pa.table({"id": [1], "v": [1]}))
    assert json.loads(t.storage.read_bytes(".hoodie/.truetime"))["seq"] == 2
