"""Metrics on synthetic histories with known answers."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.metrics import MetricParams, compute_metrics, timeseries
from harness.metrics.buckets import Buckets

T0 = 1_700_000_000.0
WARMUP, DURATION = 10, 60


def history(
    rows_by_second: Sequence[float],
    faults: Sequence[dict[str, Any]] = (),
    extra: Sequence[dict[str, Any]] = (),
    phase: float = 1.0,
    interval: float = 1.0,
) -> list[dict[str, Any]]:
    """run_start (1 s checkpoints), one commit at second i + phase for every nonzero
    rows_by_second[i]. With the default phase the commit at the end of second i makes its
    rows visible over second i, so rows_by_second[i] is x_i for a steady stream."""
    events: list[dict[str, Any]] = [
        {
            "t": T0,
            "kind": "run_start",
            "src": "runner",
            "run_id": "r",
            "scenario": "s",
            "warmup_s": WARMUP,
            "duration_s": DURATION,
            "checkpoint_interval_s": interval,
        }
    ]
    for i, rows in enumerate(rows_by_second):
        if rows:
            events.append(
                {
                    "t": T0 + i + phase,
                    "kind": "commit",
                    "src": "coordinator",
                    "rows": rows,
                    "latency_ms": 20.0,
                    "max_event_time": T0 + i + phase - 0.3,
                    "instant": str(i),
                }
            )
    for f in faults:
        events.append(
            {
                "t": T0 + f["start_s"],
                "kind": "fault",
                "src": "runner",
                "target": None,
                "end_s": None,
                "applied": True,
                "evidence": {},
                **f,
            }
        )
    events += extra
    events.append({"t": T0 + WARMUP + DURATION, "kind": "run_end", "src": "runner", "status": "ok"})
    return sorted(events, key=lambda e: e["t"])


def steady(rate: float = 1000.0) -> list[float]:
    return [rate] * (WARMUP + DURATION)


def test_steady_throughput_is_smooth() -> None:
    m = compute_metrics(history(steady()))
    tp = m["throughput_rows_per_s"]
    assert tp["mean"] == tp["p1"] == tp["p50"] == tp["p99"] == 1000
    assert tp["cv"] == 0 and tp["floor_ratio"] == 1
    assert m["stalls"]["count"] == 0
    assert m["seconds_measured"] == DURATION


def test_warmup_is_excluded_but_rows_committed_counts_the_whole_run() -> None:
    rows = steady()
    rows[:WARMUP] = [5000] * WARMUP
    m = compute_metrics(history(rows))
    assert m["throughput_rows_per_s"]["mean"] == 1000
    assert m["rows_committed"] == 5000 * WARMUP + 1000 * DURATION


def test_a_stall_of_exactly_three_seconds() -> None:
    rows = steady()
    rows[30:33] = [0, 50, 0]  # 50 < 0.1 * median 1000
    m = compute_metrics(history(rows))
    assert m["stalls"] == {
        "count": 1,
        "total_s": 3.0,
        "longest_s": 3.0,
        "runs": [{"start_s": 30.0, "length_s": 3.0, "faults": []}],
    }


def test_two_stalls_and_the_fault_they_coincide_with() -> None:
    rows = steady()
    rows[20:22] = [0, 0]
    rows[40:45] = [0] * 5
    fault = {"fault_kind": "coordinator_crash", "target": "coordinator", "start_s": 40.0}
    s = compute_metrics(history(rows, [fault]))["stalls"]
    assert (s["count"], s["total_s"], s["longest_s"]) == (2, 7.0, 5.0)
    assert s["runs"][1]["faults"] == ["coordinator_crash(coordinator)@40s"]


def test_a_dip_of_fifty_percent_and_its_recovery() -> None:
    rows = steady()
    rows[40:45] = [500] * 5
    fault = {"fault_kind": "clock_skew", "target": "coordinator", "start_s": 40.0, "end_s": 45.0}
    (f,) = compute_metrics(history(rows, [fault]))["faults"]
    assert f["baseline_rows_per_s"] == 1000
    assert f["dip"] == pytest.approx(0.5)
    assert f["deficit"] == pytest.approx(2500)
    assert f["time_to_recover_s"] == 5.0
    assert f["time_to_first_commit_s"] == 0.0  # the commit of second 39, at 40.0
    assert (f["kind"], f["target"], f["start_s"], f["end_s"]) == (
        "clock_skew",
        "coordinator",
        40,
        45,
    )


def test_a_crash_that_stops_commits_and_recovers_in_two_steps() -> None:
    rows = steady()
    rows[39:42] = [0, 0, 0]  # no commit at 40, 41, 42: the crash at 40 stopped them
    rows[50:52] = [500, 500]  # still below 90% of B: recovery only starts at 52
    fault = {"fault_kind": "coordinator_crash", "start_s": 40.0}
    (f,) = compute_metrics(history(rows, [fault]))["faults"]
    assert f["dip"] == 1.0
    assert f["time_to_first_commit_s"] == 3.0
    assert f["time_to_recover_s"] == 12.0
    assert f["deficit"] == pytest.approx(2 * 1000 + 2 * 500)


def test_a_fault_that_never_recovers() -> None:
    rows = steady()
    rows[60:] = [100] * (len(rows) - 60)
    (f,) = compute_metrics(history(rows, [{"fault_kind": "storage_latency", "start_s": 60.0}]))[
        "faults"
    ]
    assert f["time_to_recover_s"] is None
    assert f["deficit"] == pytest.approx(900 * 10)
    assert f["dip"] == pytest.approx(0.9)


def test_a_fault_without_a_baseline_has_no_dip() -> None:
    (f,) = compute_metrics(history(steady(), [{"fault_kind": "drop_ack", "start_s": WARMUP}]))[
        "faults"
    ]
    assert f["baseline_rows_per_s"] is None and f["dip"] is None and f["deficit"] is None


def test_a_short_baseline_uses_the_seconds_there_are() -> None:
    rows = steady()
    rows[WARMUP : WARMUP + 5] = [2000] * 5
    (f,) = compute_metrics(history(rows, [{"fault_kind": "drop_ack", "start_s": WARMUP + 5}]))[
        "faults"
    ]
    assert f["baseline_rows_per_s"] == 2000


def test_an_unimpaired_fault_recovers_at_once() -> None:
    (f,) = compute_metrics(history(steady(), [{"fault_kind": "drop_ack", "start_s": 30.0}]))[
        "faults"
    ]
    assert (f["dip"], f["deficit"], f["time_to_recover_s"]) == (0.0, 0.0, 0.0)


def test_fault_free_throughput_leaves_out_fault_seconds() -> None:
    rows = steady()
    rows[40:45] = [0] * 5
    fault = {"fault_kind": "worker_pause", "start_s": 40.0, "end_s": 45.0}
    m = compute_metrics(history(rows, [fault]))
    clean = m["throughput_fault_free_rows_per_s"]
    assert clean["seconds"] == DURATION - 5
    assert clean["cv"] == 0 and clean["mean"] == 1000
    assert m["throughput_rows_per_s"]["cv"] > 0


def test_freshness_is_now_minus_newest_visible_event() -> None:
    rows = steady()
    rows[30:33] = [0, 0, 0]
    f = compute_metrics(history(rows))["freshness_s"]
    # Each commit shows rows 0.3 s old; freshness then grows to 1.3 s by the next one (a
    # sawtooth with mean 0.8 s). Three missing commits: it grows from 0.3 s to 4.3 s.
    assert f["max"] == pytest.approx(4.3)
    assert f["mean"] == pytest.approx((56 * 0.8 + 4 * 2.3) / 60, abs=1e-3)
    assert f["p99"] == pytest.approx(4.3 - 0.6, abs=0.02)  # the top 1% of 60 s: 0.6 s


@pytest.mark.parametrize("phase", [0.05, 0.3, 0.5, 0.95])
def test_freshness_does_not_depend_on_where_commits_fall_in_a_second(phase: float) -> None:
    """Read once a second, a 1 s cadence showed one phase of the sawtooth (0.3 s flat, or
    1.25 s flat): the same stream must measure the same wherever its commits fall."""
    f = compute_metrics(history(steady(), phase=phase))["freshness_s"]
    assert f["mean"] == pytest.approx(0.8, abs=0.01)
    assert f["max"] == pytest.approx(1.3, abs=1e-6)
    assert f["p99"] == pytest.approx(1.29, abs=0.01)


def test_commit_latency_and_cadence() -> None:
    rows = steady()
    rows[1::2] = [0] * len(rows[1::2])  # a commit every 2 s
    m = compute_metrics(history(rows))
    assert m["commit_cadence_s"] == {"p50": 2.0, "p99": 2.0, "max": 2.0, "jitter": 1.0}
    assert m["commit_latency_ms"] == {"p50": 20.0, "p99": 20.0, "max": 20.0}


PHASES = [0.0, 0.001, 0.25, 0.5, 0.75, 0.999]


@pytest.mark.parametrize("phase", PHASES)
def test_a_steady_cadence_reads_steady_at_any_phase(phase: float) -> None:
    tp = compute_metrics(history(steady(), phase=phase))["throughput_rows_per_s"]
    assert tp["mean"] == pytest.approx(1000)
    assert tp["cv"] == pytest.approx(0, abs=1e-9) and tp["floor_ratio"] == pytest.approx(1)


def test_commits_jittering_around_the_bucket_edges_do_not_alias() -> None:
    events = history(steady(), phase=1.0)
    for k, e in enumerate(x for x in events if x["kind"] == "commit"):
        e["t"] += 0.02 if k % 2 else -0.02  # just before, just after the edge, in turn
    # Counted where they land, the commits alternate between 0 and 2 per second ...
    commits = [e["t"] - T0 for e in events if e["kind"] == "commit"]
    landed = Buckets(np.arange(WARMUP, WARMUP + DURATION, 1.0), 1.0).total(
        np.array(commits), np.full(len(commits), 1000.0)
    )
    assert np.std(landed) / np.mean(landed) > 0.5
    # ... spread over the time each covers, the stream is steady.
    assert compute_metrics(events)["throughput_rows_per_s"]["cv"] < 0.05


@pytest.mark.parametrize("phase", [0.0, 0.3, 0.7])
@pytest.mark.parametrize("recorded", [True, False])
def test_a_two_second_checkpoint_cadence_reads_steady(phase: float, recorded: bool) -> None:
    rows = steady(2000)
    rows[1::2] = [0] * len(rows[1::2])  # a commit of 2 s of rows every 2 s
    events = history(rows, phase=phase, interval=2.0)
    if not recorded:  # an old history: one interval is the commits' median gap
        del events[0]["checkpoint_interval_s"]
    tp = compute_metrics(events)["throughput_rows_per_s"]
    assert tp["mean"] == pytest.approx(1000) and tp["cv"] == pytest.approx(0, abs=1e-9)
    # Spread over one second only, the same commits alternate between full and thin seconds.
    one = compute_metrics(events, params=MetricParams(checkpoint_interval_s=1.0))
    assert one["throughput_rows_per_s"]["cv"] > 0.3


@pytest.mark.parametrize("phase", PHASES)
def test_a_five_second_stall_shows_at_least_four_empty_seconds(phase: float) -> None:
    rows = steady()
    rows[30:35] = [0] * 5  # five commits missing: nothing visible for 5 s past the cadence
    rows[35] = 6000  # the catch-up commit
    m = compute_metrics(history(rows, phase=phase))
    x = timeseries(history(rows, phase=phase))["rows_per_s"].to_numpy()
    assert (x == 0).sum() >= 4
    assert m["stalls"]["count"] == 1 and m["stalls"]["longest_s"] >= 4
    # The catch-up commit's rows are spread over one interval, not back into the stall.
    assert np.nanmax(x) >= 3000


def test_the_end_of_the_run_is_judged_by_its_committed_part() -> None:
    rows = steady()[: WARMUP + DURATION]
    events = history(rows, phase=0.5)
    # The commit due at the end + 0.5 s never came: the last second is judged by its first
    # half, not counted half-empty.
    events = [e for e in events if not (e["kind"] == "commit" and e["t"] > T0 + 69.9)]
    tp = compute_metrics(events)["throughput_rows_per_s"]
    assert tp["cv"] == pytest.approx(0, abs=1e-9) and tp["p1"] == pytest.approx(1000)
    # Commits that stopped more than one interval before the end are a stall, not a tail.
    early = [e for e in events if not (e["kind"] == "commit" and e["t"] > T0 + 66.9)]
    assert compute_metrics(early)["stalls"]["runs"][-1]["length_s"] == 3.0


def flushes(task: int, offset: float, rows: float = 500.0, attempt: int = 0) -> list[dict]:
    return [
        {
            "t": T0 + s + offset,
            "kind": "flush",
            "src": f"writer:{task}",
            "task": task,
            "attempt": attempt,
            "rows": rows,
            "last_batch": True,
        }
        for s in range(WARMUP + DURATION + 1)
    ]


def test_ingest_rate_is_what_the_writer_tasks_wrote() -> None:
    # Two tasks flushing once a second at different phases: 1000 rows/s in all.
    m = compute_metrics(history(steady(), extra=flushes(0, 0.2) + flushes(1, 0.9)))
    ingest = m["ingest_rows_per_s"]
    assert ingest["mean"] == pytest.approx(1000) and ingest["cv"] == pytest.approx(0, abs=1e-9)
    frame = timeseries(history(steady(), extra=flushes(0, 0.2) + flushes(1, 0.9)))
    assert frame["ingest_rows_per_s"].to_numpy() == pytest.approx(np.full(DURATION, 1000.0))
    # A retried task wrote its rows again: they count.
    retry = [e for e in flushes(1, 0.5, attempt=1) if e["t"] == T0 + 40.5]
    again = compute_metrics(history(steady(), extra=flushes(0, 0.2) + flushes(1, 0.9) + retry))
    assert again["ingest_rows_per_s"]["mean"] == pytest.approx(1000 + 500 / DURATION)


def test_no_flush_events_is_no_ingest() -> None:
    assert compute_metrics(history(steady()))["ingest_rows_per_s"]["mean"] == 0


def test_writer_blocked_time_is_spread_over_the_seconds_it_covered() -> None:
    request = {
        "t": T0 + 20.5,
        "kind": "instant_request",
        "src": "writer:0",
        "latency_ms": 2600,
        "blocked_ms": 2500,
        "checkpoint_id": 3,
        "instant": "x",
        "task": 0,
        "created": True,
    }
    m = compute_metrics(history(steady(), extra=[request]))
    # The writer waited 2600 ms for its instant (2500 of them for earlier commits).
    assert m["writer_blocked_ms_per_s"]["mean"] == pytest.approx(2600 / DURATION)
    assert m["writer_blocked_ms_per_s"]["p99"] == pytest.approx(1000, rel=0.02)
    assert m["instant_request_ms"] == {"p50": 2600.0, "p99": 2600.0}


def test_instant_waits() -> None:
    created = [
        {
            "t": T0 + 20 + i,
            "kind": "instant_created",
            "src": "coordinator",
            "checkpoint_id": i,
            "instant": str(i),
            "truetime_sleep_ms": 200.0,
            "lock_wait_ms": float(i),
        }
        for i in range(11)
    ]
    m = compute_metrics(history(steady(), extra=created))
    assert m["truetime_sleep_ms"] == {"p50": 200.0, "p99": 200.0}
    assert m["lock_wait_ms"]["p50"] == 5.0


def test_pending_instants_and_backlog_slope() -> None:
    series = [
        {
            "t": T0 + s,
            "elapsed_s": s,
            "source_offset": 1000 * s,
            "committed_offset": 990 * s,
            "pending_instants": s % 3,
            "rows_committed_total": 990 * s,
            "active_faults": [],
        }
        for s in range(WARMUP + DURATION)
    ]
    m = compute_metrics(history(steady()), series)
    assert m["pending_instants"]["max"] == 2
    assert m["backlog_rows"]["slope"] == pytest.approx(10.0)
    assert m["backlog_rows"]["max"] == pytest.approx(10 * (WARMUP + DURATION - 1))


def test_frames_and_lists_give_the_same_metrics() -> None:
    events = history(steady(), [{"fault_kind": "drop_ack", "start_s": 30.0}])
    assert compute_metrics(pd.DataFrame(events)) == compute_metrics(events)


def test_empty_run_has_none_not_nan() -> None:
    m = compute_metrics(history([]))
    assert m["rows_committed"] == 0
    assert m["commit_latency_ms"] == {"p50": None, "p99": None, "max": None}
    assert m["freshness_s"]["mean"] is None


def test_a_run_that_ended_early_is_measured_until_its_end() -> None:
    events = [e for e in history(steady()) if e["kind"] != "run_end"]
    events.append({"t": T0 + 40, "kind": "run_end", "src": "runner", "status": "error"})
    assert compute_metrics(events)["seconds_measured"] == 30


def test_history_without_run_start_is_an_error() -> None:
    with pytest.raises(ValueError, match="run_start"):
        compute_metrics([{"t": T0, "kind": "commit", "rows": 1}])


def test_timeseries_has_one_row_per_measured_second() -> None:
    frame = timeseries(history(steady(), [{"fault_kind": "drop_ack", "start_s": 30.0}]))
    assert len(frame) == DURATION and frame["start_s"].iloc[0] == WARMUP
    assert frame.loc[frame["start_s"] == 30, "faults"].item() == ["drop_ack@30s"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 20, allow_nan=False), st.floats(0, 5, allow_nan=False)),
        max_size=20,
    )
)
def test_overlap_matches_brute_force(intervals: list[tuple[float, float]]) -> None:
    buckets = Buckets(starts=np.arange(0.0, 20.0), width=1.0)
    begins = np.array([b for b, _ in intervals])
    ends = begins + np.array([d for _, d in intervals])
    expected = [
        sum(max(0.0, min(e, s + 1) - max(b, s)) for b, e in zip(begins, ends, strict=True))
        for s in buckets.starts
    ]
    assert buckets.overlap(begins, ends) == pytest.approx(expected, abs=1e-9)
    weights = np.arange(1.0, len(intervals) + 1)
    weighted = [
        sum(
            w * max(0.0, min(e, s + 1) - max(b, s))
            for b, e, w in zip(begins, ends, weights, strict=True)
        )
        for s in buckets.starts
    ]
    assert buckets.overlap(begins, ends, weights) == pytest.approx(weighted, abs=1e-6)
