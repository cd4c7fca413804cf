"""After a run: read the table back, run the checks, compute the metrics, build result.json."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.checks import CheckResult, combine_verdicts
from harness.checks.result import capped
from harness.faults.kinds import LASTING_KINDS
from harness.history import load_events, read_series
from harness.history_events import Kind
from harness.metrics import MetricParams, compute_metrics
from harness.runner.check_inputs import CHECKS, run_checks
from harness.runner.driver_config import fault_occurrences
from harness.runner.environment import environment, spark_tools
from harness.runner.final_state import read_final_state
from harness.runner.hosts_setup import hosts_environment
from harness.runner.lock_setup import lock_environment
from harness.runner.per_second import write_per_second
from harness.runner.rundir import RunPaths
from harness.runner.table_store import storage_environment
from harness.scenario import Scenario
from harness.scenario.rate import ConstantRate


def _fault_records(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per fault occurrence: a fault applied in several processes (storage
    latency in the driver and in every executor) is listed once, at its first evidence."""
    out, seen = [], set()
    for e in events:
        if e["kind"] != Kind.FAULT:
            continue
        lasting = e.get("label") and e.get("fault_kind") in LASTING_KINDS
        key = (e.get("label"), e.get("target"))
        if lasting and key in seen:
            continue
        seen.add(key)
        out.append(
            {
                "kind": e.get("fault_kind"),
                "target": e.get("target"),
                "start_s": e.get("start_s"),
                "end_s": e.get("end_s"),
                "applied": bool(e.get("applied")),
                "evidence": dict(e.get("evidence", {})),
            }
        )
    return out


def _distrust(results: list[CheckResult], problems: list[str]) -> list[CheckResult]:
    """With history lines that could not be read, the checks that needed the events are
    unknown: a lost batch or commit event can fake a violation as well as hide one."""
    if not problems:
        return results
    unreadable = {"count": len(problems), "items": capped(problems)}
    out = []
    for r in results:
        if r.name in CHECKS and CHECKS[r.name].reads_history:
            reason = "; ".join(
                x for x in ("history lines could not be read", r.evidence.get("reason")) if x
            )
            evidence = {**r.evidence, "reason": reason, "history_problems": unreadable}
            r = CheckResult(
                r.name, "unknown", {**evidence, "verdict_from_readable_events": r.verdict}
            )
        out.append(r)
    return out


def _faults_not_applied(scenario: Scenario, events: list[dict[str, Any]]) -> list[str]:
    applied = {e.get("label") for e in events if e["kind"] == Kind.FAULT and e.get("applied")}
    return [o.label for o in fault_occurrences(scenario) if o.label not in applied]


def analyse_run(
    scenario: Scenario,
    paths: RunPaths,
    run_id: str,
    variant: str | None,
    error: str | None,
    on_phase: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """on_phase: told what the analysis is doing (the terminal's status line)."""
    on_phase("analysing: reading the history")
    events, history_problems = load_events(paths.history)
    series = read_series(paths.history)
    error = run_error(error, events)
    checks: dict[str, Any] = {}
    if error is None:
        try:
            on_phase("analysing: reading the table")
            final = read_final_state(scenario, paths)
            checked = run_checks(scenario, events, final, paths, on_phase)
            results = _distrust(checked, history_problems)
            checks = {r.name: r.to_dict() for r in results}
        except Exception as exc:  # an unreadable table: the verdict is unknown, not valid
            error = f"checking failed: {type(exc).__name__}: {exc}"
    on_phase("analysing: metrics")
    environment_ = {
        **environment(scenario.cluster.backend),
        **spark_tools(paths, events),
        "instant_mode": _instant_mode(scenario, events),
        "lock": lock_environment(paths) or {"provider": scenario.engine.lock.provider},
        "storage": storage_environment(scenario),
        "hosts": hosts_environment(paths),
    }
    return assemble_result(
        scenario, paths, run_id, variant, error, checks, events, series, environment_
    )


def run_error(error: str | None, events: list[dict[str, Any]]) -> str | None:
    """The run's error: a failed table service first, since it is the cause a driver
    that exits with the table-service code only reports (whether it failed mid-run and
    the driver restarted, or at the end and the last driver's exit says so)."""
    return "; ".join(e for e in (table_service_failure(events), error) if e) or None


def table_service_failure(events: list[dict[str, Any]]) -> str | None:
    """A compaction, clean or archival that raised in a driver nobody had fenced: the run
    did not run the table services it claims, whatever its last driver did after (a
    fenced zombie's failure is fencing at work)."""
    kinds = (Kind.COMPACTION_FAILED, Kind.TABLE_SERVICE_FAILED)
    failed = [e for e in events if e["kind"] in kinds and not e.get("fenced")]
    if not failed:
        return None
    first = failed[0]
    return f"a table service failed ({first['kind']}: {first.get('error')}); see history"


def assemble_result(
    scenario: Scenario,
    paths: RunPaths,
    run_id: str,
    variant: str | None,
    error: str | None,
    checks: dict[str, Any],
    events: list[dict[str, Any]],
    series: list[dict[str, Any]],
    environment_: dict[str, Any],
    violation_stands: bool = False,
) -> dict[str, Any]:
    """result.json of any system's run: metrics from the history, each fault with its
    evidence, and the verdict (unknown on an error or a fault that never took effect).
    `violation_stands`: the checks judged durable state the error cannot have changed (the
    system under test failed by itself), so an invalid check makes the run invalid."""
    try:
        # Each commit's rows are spread over its checkpoint interval (DESIGN.md "Metrics"),
        # so 1-second buckets do not alias against the commit cadence.
        interval = MetricParams(checkpoint_interval_s=scenario.engine.checkpoint_interval_s)
        metrics = compute_metrics(events, series, interval)
        write_per_second(paths.history, events, interval)  # the series reports chart
        # Restarts of the pipeline driver: -9 a crash fault (SIGKILL), 4 a fenced zombie,
        # anything else a job failure the system raised loudly (see logs/driver-N.log).
        exits = [e for e in events if e["kind"] == Kind.DRIVER_EXIT]
        metrics["driver_restarts"] = {
            "count": len(exits),
            "exit_codes": [e.get("code") for e in exits],
        }
    except Exception as exc:
        metrics = {"error": f"{type(exc).__name__}: {exc}"}
    faults = _fault_records(events)
    missed = _faults_not_applied(scenario, events)
    if missed and error is None:
        # A fault that never took effect means the run did not test what it says: fail closed.
        error = f"faults never took effect: {', '.join(missed)}"
    verdict = combine_verdicts(c["verdict"] for c in checks.values())
    if error and not (violation_stands and verdict == "invalid"):
        verdict = "unknown"
    return {
        "scenario": scenario.name,
        "run_id": run_id,
        "variant": variant,
        "verdict": verdict,
        "error": error,
        "checks": checks,
        "metrics": metrics,
        "faults": faults
        + [
            {"kind": m.split("@")[0].split("#")[0], "label": m, "applied": False, "evidence": {}}
            for m in missed
        ],
        "environment": environment_,
        "load": _load(scenario),
    }


def _load(scenario: Scenario) -> dict[str, float | None] | None:
    """The rate a fraction of the machine's ceiling resolved to (harness.jobs.ceiling)."""
    rate = scenario.source.rate
    if not isinstance(rate, ConstantRate) or rate.fraction_of_ceiling is None:
        return None
    return {
        "fraction_of_ceiling": rate.fraction_of_ceiling,
        "ceiling_rows_per_s": rate.ceiling_rows_per_s,
        "rows_per_s": rate.rows_per_s,
    }


def _instant_mode(scenario: Scenario, events: list[dict]) -> dict[str, str]:
    """The mode asked for and the one the coordinator ran (COW upserts force blocking)."""
    requested = scenario.engine.instant_mode
    forced = [e["mode"] for e in events if e["kind"] == Kind.INSTANT_MODE_FORCED]
    return {"requested": requested, "effective": forced[-1] if forced else requested}
