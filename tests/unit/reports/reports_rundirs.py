"""Synthetic run directories written by hand, following docs/history.md and DESIGN.md.

A uniquely named module (not conftest.py) so tests can import its constants without
clashing with the other test folders' conftest modules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.metrics import compute_metrics
from harness.runner.per_second import write_per_second

T0 = 1_700_000_000.0
WARMUP, DURATION, INTERVAL, WRITERS = 5, 30, 1, 2
ROWS_PER_S = 20_000
SKEW = {"kind": "clock_skew", "target": "coordinator", "start_s": 14.0, "end_s": 21.0}
CRASH = {"kind": "writer_crash", "target": "writer:1", "start_s": 26.0, "end_s": None}
SKEW_LABEL = "clock_skew(coordinator)@14s"
CHECK_NAMES = ["exactly_once", "timeline", "unique_keys"]

Events = list[dict[str, Any]]


def event(t: float, kind: str, src: str = "coordinator", **fields: Any) -> dict[str, Any]:
    return {"t": T0 + t, "kind": kind, "src": src, **fields}


def _protocol(mode: str) -> Events:
    """One instant per checkpoint interval, committed 0.3 s after the interval ends (1.8 s
    during the clock skew, at half the rows). Blocking: an instant is requested only once the
    previous one completed and the writers wait for it. Async: requested at once, so each
    commit overlaps the next instant's writes. The instant hit by the crash is rolled back."""
    events: Events = []
    previous_done = 0.0
    for n in range(1, (WARMUP + DURATION) // INTERVAL):
        start = float(n * INTERVAL)
        requested = max(start, previous_done) if mode == "blocking" else start
        wait_ms = (requested - start) * 1000
        instant = f"2023111422{n:04d}"
        in_fault = SKEW["start_s"] <= start < SKEW["end_s"]
        completed = max(start + INTERVAL + (1.8 if in_fault else 0.3), requested + 0.1)
        events.append(event(requested, "instant_created", instant=instant, checkpoint_id=n))
        events += [
            event(
                requested,
                "instant_request",
                f"writer:{w}",
                checkpoint_id=n,
                instant=instant,
                task=w,
                latency_ms=wait_ms,
                blocked_ms=wait_ms,
            )
            for w in range(WRITERS)
        ]
        if start == CRASH["start_s"]:
            events.append(event(start + 0.5, "rollback", instant=instant, reason="writer crash"))
            continue
        previous_done = completed
        rows = ROWS_PER_S * INTERVAL // (2 if in_fault else 1)
        events.append(
            event(
                completed,
                "commit",
                instant=instant,
                checkpoint_id=n,
                rows=rows,
                files=WRITERS,
                latency_ms=300.0,
                max_event_time=T0 + start,
            )
        )
    return events


def _faults() -> Events:
    return [
        event(
            f["start_s"],
            "fault",
            "runner",
            fault_kind=f["kind"],
            target=f["target"],
            start_s=f["start_s"],
            end_s=f["end_s"],
            applied=True,
            evidence={"offset_ms": -500} if f is SKEW else {"pid": 4242},
        )
        for f in (SKEW, CRASH)
    ]


def history(mode: str) -> Events:
    start = event(
        0.0,
        "run_start",
        "runner",
        run_id=f"r-{mode}",
        scenario="blocking-vs-async",
        warmup_s=WARMUP,
        duration_s=DURATION,
    )
    end = event(WARMUP + DURATION, "run_end", "runner", status="ok", error=None)
    body = sorted(_protocol(mode) + _faults(), key=lambda e: e["t"])
    return [start, *body, end]


def series(events: Events) -> Events:
    samples = []
    for s in range(WARMUP + DURATION):
        now = T0 + s
        created = sum(e["kind"] == "instant_created" and e["t"] <= now for e in events)
        done = sum(e["kind"] in ("commit", "rollback") and e["t"] <= now for e in events)
        committed = sum(e.get("rows", 0) for e in events if e["kind"] == "commit" and e["t"] <= now)
        samples.append(
            {
                "t": now,
                "elapsed_s": float(s),
                "source_offset": ROWS_PER_S * s,
                "committed_offset": committed,
                "pending_instants": created - done,
                "rows_committed_total": committed,
                "active_faults": [],
            }
        )
    return samples


def write_history(history_dir: Path, events: Events, samples: Events) -> None:
    history_dir.mkdir(parents=True, exist_ok=True)
    by_src: dict[str, Events] = {}
    for e in events:  # one file per process, as the runner writes them
        by_src.setdefault(e["src"].replace(":", "_"), []).append(e)
    for src, items in by_src.items():
        lines = "".join(json.dumps(e) + "\n" for e in items)
        (history_dir / f"events-{src}-1.jsonl").write_text(lines)
    (history_dir / "series.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    write_per_second(history_dir, events)  # as the run's analysis does


def result(mode: str, events: Events, samples: Events) -> dict[str, Any]:
    return {
        "scenario": "blocking-vs-async",
        "run_id": f"r-{mode}",
        "variant": mode,
        "verdict": "invalid",
        "error": None,
        "checks": {
            "exactly_once": {"verdict": "valid", "batches": 16, "lost": [], "duplicated": []},
            "timeline": {
                "verdict": "invalid",
                "violations": [
                    {
                        "instant": "20231114220007",
                        "problem": "requested time not after its predecessor",
                    }
                ],
            },
            "unique_keys": {"verdict": "valid", "keys": 600000},
        },
        "metrics": compute_metrics(events, samples),
        "faults": [
            {
                "kind": f["kind"],
                "target": f["target"],
                "start_s": f["start_s"],
                "end_s": f["end_s"],
                "applied": True,
                "evidence": {"note": "synthetic"},
            }
            for f in (SKEW, CRASH)
        ],
        "environment": {
            "versions": {"python": "3.11.7", "pyspark": "4.0.1"},
            "machine": {"cpus": 2},
            "backend": "local",
        },
    }


SCENARIO_YAML = "name: blocking-vs-async\nwarmup_s: 5\nduration_s: 30\n"
