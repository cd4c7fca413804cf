"""Locust against a real engine table for a few seconds: batch-writer users commit through
OCC transactions; Locust's counts match the table's timeline."""

from pathlib import Path

from harness.jobs.contention import ContentionSpec, measure_contention


# Its stages were seconds of wall clock only: beside two Spark runs (a CI rehearsal at
# 24603f1) four users made one commit in four seconds and never overlapped. Now each
# stage's first round is forced (every user begins before any commits), so the 4-user
# stage conflicts however slow the machine, and the stage lasts until that round is over.
def test_locust_counts_commits_and_conflicts(tmp_path: Path) -> None:
    spec = ContentionSpec(
        stages=[{"users": 1, "duration_s": 2}, {"users": 4, "duration_s": 4}],
        file_groups=2,
        rows_per_commit=50,  # every commit touches both groups: overlapping commits conflict
        keys=5000,
        max_skew_ms=10,
        storage_latency_ms=20,  # long commit windows: concurrent users overlap
        forced_rounds=1,
    )
    result = measure_contention(spec, tmp_path)
    one, four = result["stages"]
    assert not result["timed_out"] and result["errors"] == []
    assert one["users"] == 1 and one["commits"] > 0 and one["conflicts"] == 0
    # The forced round: one of the four committed first, the three others conflicted.
    assert four["users"] == 4 and four["commits"] > 0 and four["conflicts"] >= 3
    for stage in (one, four):
        assert stage["attempts"] == stage["commits"] + stage["conflicts"]
        assert stage["latency_ms"]["p50"] <= stage["latency_ms"]["p99"]
    # Every Locust success is one completed commit on the table, and nothing else is.
    transition = result["transition"]["commits"]
    assert result["table_commits"] == one["commits"] + four["commits"] + transition
    assert "write conflict" in result["sample_conflict"]
    assert not list(tmp_path.iterdir())  # the temporary table is gone
