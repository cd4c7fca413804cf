"""Which batches must be visible after a run: Spark's checkpoint location, not driver events.

The checkpoint's offset and commit logs survive any driver crash; events a driver wrote
(its AckWatcher's "batch" events) do not cover a batch Spark committed just before the
driver was killed. The history is used only for what the checkpoint cannot say (which ACKs
reached the coordinator) and is cross-checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.checks import CheckResult
from harness.checks.result import capped
from harness.history_events import Kind
from harness.pipeline.checkpoints import CheckpointRecord, LoggedBatch, read_checkpoint
from harness.scenario import Scenario

SOURCE = "spark_checkpoint"


@dataclass
class GroundTruth:
    batches: list[dict[str, Any]]  # the checkers' expected batches
    checkpoint: CheckpointRecord
    uncertain_committed: list[dict[str, Any]] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)

    def evidence(self) -> dict[str, Any]:
        return {
            "ground_truth": SOURCE,
            "checkpoint": {
                **self.checkpoint.summary(),
                "committed_but_uncertain": capped(self.uncertain_committed),
                "history_disagreements": capped(self.disagreements),
            },
        }

    def judge(self, result: CheckResult) -> CheckResult:
        """The checker's verdict on these batches, failing closed on a doubtful record:
        with gaps or disagreements a `valid` becomes `unknown`; `invalid` stands only where
        it is provable anyway (an id visible twice, or rows missing from a committed range
        whose bounds are not contradicted)."""
        evidence = {**result.evidence, **self.evidence()}
        problems = self.checkpoint.gaps + self.checkpoint.conflicts + self.disagreements
        if not problems or result.verdict == "unknown":
            return CheckResult(result.name, result.verdict, evidence)
        found = result.evidence
        lost = found.get("lost", {}).get("count", 0)
        duplicated = found.get("duplicated", {}).get("count", 0)
        provable = duplicated or (lost and not self.checkpoint.conflicts)
        if result.verdict == "invalid" and provable:
            return CheckResult(result.name, "invalid", evidence)
        reason = "Spark's checkpoint record is incomplete or contradicts the history: "
        return CheckResult(result.name, "unknown", {**evidence, "reason": reason + problems[0]})


def _ack_history(events: list[dict[str, Any]]) -> tuple[int, dict[int, str]]:
    """(newest ACK the coordinator received, -1 if none; ACKs a fault lost -> how)."""
    received = {
        e["checkpoint_id"] for e in events if e["kind"] == Kind.ACK and e["action"] != "dropped"
    }
    lost: dict[int, str] = {}
    for e in events:
        if e["kind"] == Kind.ACK and e["action"] == "dropped":
            lost[e["checkpoint_id"]] = "dropped by a fault"
        elif e["kind"] == Kind.ACK_DELAYED and e["checkpoint_id"] not in received:
            delay = e.get("delay_s")
            lost[e["checkpoint_id"]] = f"delayed {delay} s by a fault, not delivered before the end"
    return max(received, default=-1), lost


def _uncertainty(
    batch: LoggedBatch, raw_sink: bool, last_ack: int, lost: dict[int, str]
) -> str | None:
    """Why a batch's fate is open (all or nothing), or None if it must be visible.

    - Offsets logged, no commit: the query stopped or crashed mid-batch: uncertain.
    - Committed by Spark: certain. The subsume contract commits it with any later ACK, a
      restarted coordinator adopts it, and the driver's stop path delivers the ACK of
      every batch Spark committed (AckWatcher.stop) and waits for its commits
      (EngineSink.close). The raw_parquet sink has no ACKs: committed means written.
    - The one exception, and only with its cause in the history: no ACK >= the batch
      reached any coordinator because a fault lost an ACK >= it (dropped, or delayed past
      the end) and no later ACK followed before the run ended. The engine then holds the
      instant pending for an ACK that never comes (a restart would commit it).
    """
    if not batch.committed:
        return "offsets logged without a commit: the query stopped or crashed mid-batch"
    if raw_sink or batch.batch_id <= last_ack:
        return None
    causes = {c: how for c, how in lost.items() if c >= batch.batch_id}
    if not causes:
        return None
    c = min(causes)
    return (
        f"committed by Spark, but no ACK >= {batch.batch_id} reached the coordinator "
        f"(newest received: {last_ack}): ACK {c} was {causes[c]} and no later ACK followed"
    )


def _disagreements(events: list[dict[str, Any]], record: CheckpointRecord) -> list[str]:
    """History "batch" events (raw offsets) that the checkpoint does not confirm."""
    out = []
    by_id = {n: b for b in record.batches for n in range(b.first_id, b.batch_id + 1)}
    for e in events:
        if e["kind"] != Kind.BATCH:
            continue
        n, start, end = e["batch_id"], int(e["start_offset"]), int(e["end_offset"])
        b = by_id.get(n)
        if b is None or not b.committed:
            out.append(f"history: batch {n} completed; Spark's commit log has no entry for it")
        elif (b.first_id == n and (start, end) != (b.start_offset, b.end_offset)) or not (
            b.start_offset <= start <= end <= b.end_offset
        ):
            out.append(
                f"history: batch {n} covers offsets {start}..{end}; "
                f"Spark's offset log: {b.start_offset}..{b.end_offset}"
            )
    return out


def expected_batches(
    scenario: Scenario, events: list[dict[str, Any]], checkpoint_dir: str | Path
) -> GroundTruth:
    """The batches the table must show (ids and offset ranges), from the checkpoint."""
    record = read_checkpoint(checkpoint_dir)
    last_ack, lost = _ack_history(events)
    raw_sink = scenario.engine.sink == "raw_parquet"
    legs = 2 if scenario.source.mode == "bank" else 1  # a transfer is two rows
    truth = GroundTruth([], record, disagreements=_disagreements(events, record))
    for b in record.batches:
        reason = _uncertainty(b, raw_sink, last_ack, lost)
        entry: dict[str, Any] = {
            "batch_id": b.batch_id,
            "start_offset": b.start_offset * legs,
            "end_offset": b.end_offset * legs,
            "certain": reason is None,
        }
        if b.first_id != b.batch_id:
            entry["first_batch_id"] = b.first_id  # earlier entries missing: folded in here
        if reason is not None:
            entry["reason"] = reason
            if b.committed:
                truth.uncertain_committed.append({"batch_id": b.batch_id, "reason": reason})
        truth.batches.append(entry)
    return truth
