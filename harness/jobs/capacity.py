"""`instantbench capacity SCENARIO.yaml`: sweep the offered rate (open loop), the writer
count and the checkpoint interval; find the highest rate that holds the scenario's SLO;
measure OCC contention of batch writers with Locust; write capacity.json.

Exit code (CapacityResult.exit_code): 1 if a run was invalid (a correctness violation under
load), 2 if a run or the contention measurement failed or ended unknown, else 0. A rate
that does not hold the SLO is a finding, not a failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.checks.verdict import EXIT_ERROR, EXIT_VALID, worst_exit_code
from harness.jobs.ceiling import at_constant_rate, resolve_load
from harness.jobs.contention import (
    DEFAULT_USERS,
    ContentionError,
    ContentionSpec,
    measure_contention,
)
from harness.jobs.slo_search import (
    DEFAULT_BACKLOG_GROWTH,
    Config,
    Point,
    SloSpec,
    best_point,
    contention_advice,
    recommendation,
    sweep,
)
from harness.runner.environment import environment
from harness.runner.progress import JobProgress
from harness.runner.run import run_scenario
from harness.runner.rundir import RunOutcome
from harness.scenario import Scenario


@dataclass(frozen=True)
class CapacityGrid:
    """The sweep. None: derived from the scenario (rates 0.5x, 1x, 2x its constant rate;
    its writer count; its checkpoint interval and twice it): 6 runs of ~30 s and 40 s of
    Locust by default."""

    rates: tuple[float, ...] | None = None
    writers: tuple[int, ...] | None = None
    intervals: tuple[float, ...] | None = None
    users: tuple[int, ...] = DEFAULT_USERS  # Locust stages; () skips the contention part
    warmup_s: float = 5
    duration_s: float = 20
    stage_s: float = 10  # seconds per Locust stage (~100 commit attempts each here)
    backlog_growth: float = DEFAULT_BACKLOG_GROWTH

    @classmethod
    def parse(
        cls,
        rates: str | None = None,
        writers: str | None = None,
        intervals: str | None = None,
        users: str | None = None,
        **rest: float,
    ) -> CapacityGrid:
        """From CLI options such as `--rates 5000,10000,20000 --users 1,2,4` (`--users ""`:
        no contention measurement). Raises ValueError naming the option."""
        return cls(
            rates=_numbers("rates", rates, float),
            writers=_numbers("writers", writers, int),
            intervals=_numbers("intervals", intervals, float),
            users=DEFAULT_USERS if users is None else _numbers("users", users, int, True) or (),
            **rest,
        )

    def resolve(self, scenario: Scenario) -> CapacityGrid:
        rates = self.rates
        if rates is None:
            rate = scenario.source.rate
            if rate.shape != "constant":
                raise ValueError(
                    f"{scenario.source_file}: source.rate: capacity derives its rates from a "
                    f"constant rate (got shape {rate.shape!r}); give the rates explicitly"
                )
            rates = tuple(rate.per_second() * f for f in (0.5, 1.0, 2.0))
        interval = scenario.engine.checkpoint_interval_s
        return CapacityGrid(
            rates=rates,
            writers=self.writers or (scenario.engine.writers,),
            intervals=self.intervals or (interval, 2 * interval),
            users=self.users,
            warmup_s=self.warmup_s,
            duration_s=self.duration_s,
            stage_s=self.stage_s,
            backlog_growth=self.backlog_growth,
        )


def _numbers(
    option: str, text: str | None, kind: type[int] | type[float], empty_ok: bool = False
) -> tuple | None:
    if text is None:
        return None
    try:
        values = tuple(kind(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ValueError(f"--{option}: expected comma-separated numbers, got {text!r}") from None
    if any(v <= 0 for v in values) or not (values or empty_ok):
        raise ValueError(f"--{option}: expected positive numbers, got {text!r}")
    return values


@dataclass
class CapacityResult:
    out_dir: Path
    points: list[Point]
    recommendation: str
    best: Point | None
    contention: dict[str, Any] | None = None
    contention_error: str | None = None

    @property
    def exit_code(self) -> int:
        worst = worst_exit_code((p.verdict for p in self.points), empty=EXIT_ERROR)
        return max(worst, EXIT_ERROR if self.contention_error else EXIT_VALID)


def point_scenario(scenario: Scenario, grid: CapacityGrid, rate: float, config: Config) -> Scenario:
    """The scenario at one grid point: constant rate, writers, interval, short run."""
    engine = {
        **scenario.engine.model_dump(mode="json"),
        "writers": config.writers,
        "checkpoint_interval_s": config.interval_s,
    }
    label = f"capacity rate={rate:g} writers={config.writers} interval={config.interval_s:g}"
    return at_constant_rate(scenario, rate, (grid.warmup_s, grid.duration_s), label, engine=engine)


def run_capacity(
    scenario: Scenario,
    out: Path,
    quiet: bool = False,
    grid: CapacityGrid | None = None,
    on_run: Callable[[RunOutcome], object] | None = None,
) -> CapacityResult:
    """Raises ValueError for a scenario or grid that cannot be swept (CLI: exit 2)."""
    if scenario.matrix:
        raise ValueError(
            f"{scenario.source_file}: matrix: capacity sweeps its own grid (rates, writers, "
            "checkpoint intervals); remove the matrix"
        )
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    out_dir = Path(out) / f"{scenario.name}-capacity-{stamp}"
    scenario, _ = resolve_load(scenario, out_dir, quiet)  # its rate as a fraction of the ceiling
    grid = (grid or CapacityGrid()).resolve(scenario)
    assert grid.rates and grid.writers and grid.intervals  # resolve() filled them in

    def run_point(rate: float, config: Config) -> dict[str, Any]:
        variant = f"rate-{rate:g}-writers-{config.writers}-ckpt-{config.interval_s:g}s"
        try:
            resolved = point_scenario(scenario, grid, rate, config)
            with job.run(variant):
                outcome = run_scenario(resolved, out_dir / "runs", variant, quiet)
        except Exception as exc:  # one failed point must not lose the rest of the sweep
            return {"verdict": "unknown", "error": f"{type(exc).__name__}: {exc}"}
        if on_run is not None:
            on_run(outcome)
        return {**outcome.result, "run_dir": str(outcome.paths.root)}

    slo = SloSpec(scenario.slo.freshness_p99_s, grid.backlog_growth)
    configs = [Config(w, s) for w in grid.writers for s in grid.intervals]
    # a grid value out of range is an input error, before any run
    plan = [point_scenario(scenario, grid, r, c).run_s for c in configs for r in grid.rates]
    # at most: a configuration stops at its first rate that fails
    with JobProgress(f"capacity {scenario.name}", plan, quiet, at_most=True) as job:
        points = sweep(configs, grid.rates, run_point, slo)
    cluster = scenario.cluster
    where = f"{cluster.backend}, {cluster.workers} worker(s) x {cluster.cores_per_worker} core(s)"
    result = CapacityResult(out_dir, points, recommendation(points, slo, where), best_point(points))
    if grid.users:
        spec = ContentionSpec.from_scenario(scenario, grid.users, grid.stage_s)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            result.contention = measure_contention(spec, out_dir)
        except ContentionError as exc:
            result.contention_error = str(exc)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "capacity.json").write_text(
        json.dumps(_summary(scenario, grid, slo, where, result), indent=2, default=str)
    )
    return result


def _summary(
    scenario: Scenario,
    grid: CapacityGrid,
    slo: SloSpec,
    cluster: str,
    result: CapacityResult,
) -> dict[str, Any]:
    stages = (result.contention or {}).get("stages", [])
    return {
        "scenario": scenario.name,
        "scenario_file": scenario.source_file,
        "cluster": cluster,
        "slo": asdict(slo),
        "grid": asdict(grid),
        "points": [p.to_dict() for p in result.points],
        "best": result.best.to_dict() if result.best else None,
        "recommendation": result.recommendation,
        "contention": result.contention,
        "contention_error": result.contention_error,
        "contention_advice": contention_advice(stages),
        "exit_code": result.exit_code,
        "environment": environment(scenario.cluster.backend),
    }
