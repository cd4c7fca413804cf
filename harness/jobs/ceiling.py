"""A rate relative to the machine: `rate: {shape: constant, fraction_of_ceiling: F}`.

The ceiling is the highest constant rate at which this machine runs the scenario's shape
(its system, cluster, table, source, engine, batch writers, readers and SLO; not its name,
seed, length, faults, checks or matrix) without falling behind, its maximum sustainable
throughput: the capacity job's criterion (harness/jobs/slo_search.judge_point: a valid run
that holds the scenario's freshness SLO and whose backlog does not grow by 2% of the rate
per second), and whose commits keep their trigger: the median gap between commits at most
CADENCE_SLACK times the checkpoint interval (Spark's own "falling behind": a micro-batch
that takes longer than its trigger interval; the slack is the commit's own latency, 0.2 s
at 1 s here in blocking mode). Without that last rule a pipeline whose micro-batches grow
with the backlog "holds" any rate up to its memory, at bursts of seconds. Found by short
probe runs, doubling or halving from
START_ROWS_PER_S until one rate holds and another does not, then bisecting (geometric
mean) until the two are within RESOLUTION of each other. The ceiling is the highest rate
that held. A probe that ends unknown did not hold (a pipeline that breaks under a load
does not sustain it); one that ends invalid stops the search: a correctness violation is
not a capacity limit.

Measured once per machine (CPU model, cores, memory) and shape, then cached in
$XDG_CACHE_HOME/instantbench/ceilings.json with its probes; the resolved scenario carries
`ceiling_rows_per_s` and the absolute `rows_per_s` into the run's scenario.yaml and
result.json (`load`). A matrix shares one rate: the ceiling is the scenario's as written,
without its matrix, so every variant runs at the same absolute load.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.jobs.slo_search import Config, Point, SloSpec, judge_point
from harness.metrics import metric_at
from harness.runner.errors import RunError
from harness.runner.run import run_scenario
from harness.runner.rundir import RunOutcome
from harness.scenario import Scenario, validate_scenario
from harness.scenario.base import MAX_ROWS_PER_S
from harness.scenario.rate import ConstantRate
from infra.cache import cache_root, exclusive

START_ROWS_PER_S = 20_000.0
MIN_ROWS_PER_S = 100.0
RESOLUTION = 1.2  # the ceiling is within 20% below the first rate seen falling behind
MAX_PROBES = 10
CADENCE_SLACK = 1.5
# Short: above the ceiling the batches outgrow their trigger within seconds. The warm-up is
# the scenario's own (at least MIN_PROBE_WARMUP_S): what a run's start-up leaves behind
# drains before the measured seconds, as in the runs the ceiling is for.
MIN_PROBE_WARMUP_S = 5.0
PROBE_DURATION_S = 12.0
# What does not change what the machine can carry: left out of the shape.
NOT_SHAPE = ("name", "seed", "warmup_s", "duration_s", "min_commits", "faults", "checks")
NOT_SHAPE_REST = ("check_engine", "matrix", "repeat", "compare", "expect")

RunProbe = Callable[[Scenario, Path, str, bool], RunOutcome]


@dataclass
class Ceiling:
    """A measured ceiling and how it was found."""

    rows_per_s: float
    fell_behind_at: float | None  # the lowest rate that did not hold (None: none tried)
    measured_at: str
    machine: dict[str, Any]
    probes: list[dict[str, Any]] = field(default_factory=list)
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def machine() -> dict[str, Any]:
    """What a ceiling depends on in the machine (not its hostname: a fresh container of the
    same kind is the same machine)."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "memory_gib": round(memory),
        "arch": platform.machine(),
    }


def shape(scenario: Scenario) -> dict[str, Any]:
    raw = scenario.model_dump(mode="json")
    for key in (*NOT_SHAPE, *NOT_SHAPE_REST):
        raw.pop(key, None)
    raw["source"].pop("rate", None)
    raw["table"].pop("path", None)
    return raw


def cache_key(scenario: Scenario, on: dict[str, Any]) -> str:
    text = json.dumps({"machine": on, "shape": shape(scenario)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cache_file() -> Path:
    return cache_root() / "ceilings.json"


def _cached(key: str) -> Ceiling | None:
    try:
        entry = json.loads(cache_file().read_text()).get(key)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict):
        return None
    return Ceiling(**{**entry, "cached": True})


def _store(key: str, ceiling: Ceiling) -> None:
    path = cache_file()
    with exclusive(path.with_suffix(".lock")):
        try:
            entries = json.loads(path.read_text())
        except (OSError, ValueError):
            entries = {}
        entries[key] = {k: v for k, v in ceiling.to_dict().items() if k != "cached"}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entries, indent=2))
        os.replace(tmp, path)


def at_constant_rate(
    scenario: Scenario, rows_per_s: float, length_s: tuple[float, float], label: str, **changes: Any
) -> Scenario:
    """The scenario as one short run (warm-up and measured seconds) at a constant rate,
    with its other top-level keys changed as given (capacity's grid points, the probes)."""
    raw = scenario.model_dump(mode="json")
    raw.update(matrix={}, repeat=1, warmup_s=length_s[0], duration_s=length_s[1], **changes)
    raw["source"]["rate"] = {"shape": "constant", "rows_per_s": round(rows_per_s, 1)}
    return validate_scenario(raw, f"{scenario.source_file} [{label}]")


def probe_scenario(scenario: Scenario, rows_per_s: float) -> Scenario:
    """The scenario's shape at one rate: short, without faults, checked for exactly once."""
    return at_constant_rate(
        scenario,
        rows_per_s,
        (max(scenario.warmup_s, MIN_PROBE_WARMUP_S), PROBE_DURATION_S),
        f"ceiling probe {rows_per_s:g}",
        name=f"{scenario.name}-ceiling"[:64],
        min_commits=0,
        faults=[],
        checks=["exactly_once"],
    )


def search(judge: Callable[[float], Point], start: float | None = None) -> list[Point]:
    """Probe rates until the highest holding one and the lowest failing one are within
    RESOLUTION (or the probes run out, or even MIN_ROWS_PER_S falls behind)."""
    points: list[Point] = []
    rate = start or START_ROWS_PER_S
    while len(points) < MAX_PROBES:
        points.append(judge(rate))
        held = [p.rate for p in points if p.holds]
        failed = [p.rate for p in points if not p.holds]
        lo, hi = max(held, default=None), min(failed, default=None)
        if lo is not None and hi is not None:
            if hi / lo <= RESOLUTION:
                break
            rate = math.sqrt(lo * hi)
        elif hi is None:
            if rate >= MAX_ROWS_PER_S:
                break
            rate = min(rate * 2, MAX_ROWS_PER_S)
        else:
            if rate <= MIN_ROWS_PER_S:
                break
            rate = max(rate / 2, MIN_ROWS_PER_S)
    return points


def keeps_cadence(point: Point, result: dict[str, Any]) -> Point:
    """A holding point holds only if its commits keep their trigger (module docstring)."""
    if not point.holds:
        return point
    gap = metric_at(result.get("metrics") or {}, "commit_cadence_s.p50")
    limit = CADENCE_SLACK * point.interval_s
    if gap is None:
        point.holds, point.reason = False, "no commit cadence measured"
    elif gap > limit:
        point.holds = False
        point.reason = (
            f"commits every {gap:.2f} s (median), past {limit:g} s ({CADENCE_SLACK:g} x the "
            f"{point.interval_s:g}-s checkpoint interval): the batches fall behind their trigger"
        )
    return point


def measure(scenario: Scenario, out_dir: Path, quiet: bool, run: RunProbe) -> Ceiling:
    """Search the ceiling with probe runs under out_dir; RunError if no rate holds or a
    probe is not valid."""
    runs_dir = out_dir / "ceiling-probes"
    config = Config(scenario.engine.writers, scenario.engine.checkpoint_interval_s)
    slo = SloSpec(scenario.slo.freshness_p99_s)

    def judge(rate: float) -> Point:
        outcome = run(probe_scenario(scenario, rate), runs_dir, f"{rate:.0f}", quiet)
        point = keeps_cadence(judge_point(rate, config, outcome.result, slo), outcome.result)
        if outcome.paths.table.is_relative_to(outcome.paths.root):
            shutil.rmtree(outcome.paths.table, ignore_errors=True)  # probes keep no tables
        if not quiet:
            print(f"ceiling probe {rate:,.0f} rows/s: {point.reason}", file=sys.stderr)
        if point.verdict == "invalid":  # a correctness violation is no capacity limit
            raise RunError(
                f"{scenario.source_file}: the ceiling probe at {rate:,.0f} rows/s ended "
                f"{point.reason} ({outcome.paths.root}); fraction_of_ceiling needs a "
                f"pipeline that runs valid: give rows_per_s instead"
            )
        return point  # unknown (it broke under the load, or lost its evidence): not held

    points = search(judge)
    held = [p.rate for p in points if p.holds]
    if not held:
        raise RunError(
            f"{scenario.source_file}: source.rate.fraction_of_ceiling: no rate down to "
            f"{min(p.rate for p in points):,.0f} rows/s held on this machine (probes in "
            f"{runs_dir}); give rows_per_s instead"
        )
    failed = [p.rate for p in points if not p.holds]
    return Ceiling(
        rows_per_s=round(max(held), 1),
        fell_behind_at=round(min(failed), 1) if failed else None,
        measured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        machine=machine(),
        probes=[p.to_dict() for p in points],
    )


def resolve_load(
    scenario: Scenario, out_dir: Path, quiet: bool, run: RunProbe | None = None
) -> tuple[Scenario, Ceiling | None]:
    """The scenario with its fraction of the ceiling resolved to rows per second (the
    ceiling from the cache, or measured now); unchanged when its rate is absolute."""
    rate = scenario.source.rate
    if not isinstance(rate, ConstantRate) or not rate.unresolved:
        return scenario, None
    key = cache_key(scenario, machine())
    ceiling = _cached(key)
    if ceiling is None:
        ceiling = measure(scenario, out_dir, quiet, run or run_scenario)
        _store(key, ceiling)
    raw = scenario.model_dump(mode="json")
    raw["source"]["rate"]["ceiling_rows_per_s"] = ceiling.rows_per_s
    return validate_scenario(raw, scenario.source_file), ceiling
