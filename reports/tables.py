"""result.json pieces as table rows: flattened metrics, checks, faults, key metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reports.rundata import RunData
from reports.timeline import fault_spans

# The headline numbers of a run, for the summary strip and report.md (dotted paths).
KEY_METRICS = [
    "rows_committed",
    "throughput_rows_per_s.mean",
    "throughput_rows_per_s.p5",
    "throughput_rows_per_s.p50",
    "throughput_rows_per_s.cv",
    "throughput_rows_per_s.floor_ratio",
    "ingest_rows_per_s.mean",
    "ingest_rows_per_s.cv",
    "stalls.count",
    "stalls.longest_s",
    "writer_blocked_ms_per_s.mean",
    "commit_latency_ms.p99",
    "freshness_s.p99",
    "pending_instants.max",
    "backlog_rows.slope",
]
SHORT_EVIDENCE_CHARS = 160
OPEN_END = "…"  # an interval bound that is unbounded (B against an A of 0 in a resample)


def fmt(value: Any) -> str:
    """Numbers for people: thousands separators, 4 significant digits, '-' when missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    if isinstance(value, list | dict):
        return json.dumps(value, default=str)
    return str(value)


def _signed(value: Any, unit: str = "") -> str:
    return OPEN_END if value is None else f"{float(value):+.1f}{unit}"


def delta_with_interval(row: Mapping[str, Any]) -> str:
    """`-99.5% [-99.7, -99.2]`: delta% of B against A with its interval; from an A of 0,
    the difference itself (`+3.2 [+1.0, +5.5] from 0`). Rows without an interval (one
    pair, or a table from before intervals) show the delta alone."""
    delta = row.get("delta_pct", row.get("delta%"))
    low, high = (row.get("ci_pct") or [None, None])[:2]
    if delta is not None and row.get("a") != 0:
        if low is None and high is None:
            return _signed(delta, "%")
        return f"{_signed(delta, '%')} [{_signed(low)}, {_signed(high)}]"
    diff = row.get("diff")
    if diff is None:
        return "-"
    low, high = (row.get("ci_diff") or [None, None])[:2]
    interval = "" if low is None and high is None else f" [{fmt(low)}, {fmt(high)}]"
    return f"{float(diff):+.4g}{interval} from 0"


def flatten(tree: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """{"a": {"b": 1}} -> [("a.b", 1)]; lists stay whole values."""
    rows: list[tuple[str, Any]] = []
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows += flatten(value, name + ".")
        else:
            rows.append((name, value))
    return rows


def metric_rows(run: RunData) -> list[tuple[str, str]]:
    """Scalar metrics, dotted. Per-fault recovery numbers live in the faults table, next to
    the fault they describe; lists (stall runs, ...) go to metric_lists."""
    metrics = {k: v for k, v in run.metrics.items() if k != "faults"}
    return [(name, fmt(value)) for name, value in flatten(metrics) if not isinstance(value, list)]


def metric_lists(run: RunData) -> list[tuple[str, int, str]]:
    """List-valued metrics as (name, length, pretty JSON), shown collapsed."""
    metrics = {k: v for k, v in run.metrics.items() if k != "faults"}
    return [
        (name, len(value), json.dumps(value, indent=2, default=str))
        for name, value in flatten(metrics)
        if isinstance(value, list)
    ]


def key_metric_rows(run: RunData) -> list[tuple[str, str]]:
    flat = dict(flatten(run.metrics))
    return [(name, fmt(flat[name])) for name in KEY_METRICS if name in flat]


@dataclass(frozen=True)
class CheckRow:
    name: str
    verdict: str
    short: str  # one line of evidence for the table and report.md
    evidence_json: str  # all of it, pretty, for the collapsible block


def short_evidence(evidence: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in evidence.items())
    if len(text) > SHORT_EVIDENCE_CHARS:
        return text[: SHORT_EVIDENCE_CHARS - 1] + "…"
    return text


def check_rows(run: RunData) -> list[CheckRow]:
    checks = run.result.get("checks")
    rows = []
    for name, body in (checks if isinstance(checks, dict) else {}).items():
        body = body if isinstance(body, dict) else {"value": body}
        evidence = {k: v for k, v in body.items() if k != "verdict"}
        rows.append(
            CheckRow(
                name=str(name),
                verdict=str(body.get("verdict", "unknown")),
                short=short_evidence(evidence),
                evidence_json=json.dumps(evidence, indent=2, sort_keys=True, default=str),
            )
        )
    return rows


@dataclass(frozen=True)
class FaultRow:
    label: str
    kind: str
    target: str
    start_s: str
    end_s: str
    applied: bool
    recovery: list[tuple[str, str]]  # dip, deficit, time to first commit, time to recover
    evidence_json: str


RECOVERY_KEYS = ["dip", "deficit", "time_to_first_commit_s", "time_to_recover_s"]


def fault_rows(run: RunData) -> list[FaultRow]:
    """Faults joined with their per-fault metrics (matched by kind and start second)."""
    recovery = {
        (m.get("kind"), m.get("start_s")): m
        for m in run.metrics.get("faults") or []
        if isinstance(m, dict)
    }
    rows = []
    for f in fault_spans(run):
        found = recovery.get((f.kind, f.start_s), {})
        rows.append(
            FaultRow(
                label=f.label,
                kind=f.kind,
                target=f.target or "-",
                start_s=fmt(f.start_s),
                end_s=fmt(f.end_s),
                applied=f.applied,
                recovery=[(k, fmt(found.get(k))) for k in RECOVERY_KEYS],
                evidence_json=json.dumps(f.evidence, indent=2, sort_keys=True, default=str),
            )
        )
    return rows


def environment_rows(run: RunData) -> list[tuple[str, str]]:
    env = run.result.get("environment")
    return [(k, fmt(v)) for k, v in flatten(env)] if isinstance(env, dict) else []
