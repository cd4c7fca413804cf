"""Cross-field rules of a scenario: things no single key can check on its own."""

import re
from typing import TYPE_CHECKING, Any

from harness.faults.kinds import STALE_REPLAY_AFTER_S
from harness.scenario.errors import Problem
from harness.scenario.faults import CLUSTER_FAULTS, SHARED_WAIT_UNREACHED
from harness.scenario.hosts import run_host_names
from harness.scenario.keys import DottedKeyError, resolve
from harness.scenario.network_faults import NetworkFault
from harness.scenario.system import system_problems

if TYPE_CHECKING:
    from harness.scenario.model import Scenario

# Keys a matrix may not vary: they identify the scenario or the matrix itself.
_NOT_IN_MATRIX = ("name", "matrix")


def cross_field_problems(s: "Scenario") -> list[Problem]:
    return [
        *system_problems(s),
        *_check_problems(s),
        *_writer_problems(s),
        *_storage_problems(s),
        *_hosts_problems(s),
        *_min_commits_problems(s),
        *[p for i, f in enumerate(s.faults) for p in _fault_problems(s, i, f)],
        *_matrix_problems(s),
    ]


def _check_problems(s: "Scenario") -> list[Problem]:
    problems = []
    if len(set(s.checks)) != len(s.checks):
        problems.append(Problem("checks", "each check may appear once", s.checks))
    if "bank" in s.checks and s.source.mode != "bank":
        problems.append(
            Problem(
                "checks",
                f"the bank check needs source.mode bank (source.mode is {s.source.mode!r}); "
                "allowed: drop bank from checks or set source.mode: bank",
                s.checks,
            )
        )
    if s.check_engine == "spark" and s.engine.sink != "engine":
        problems.append(
            Problem(
                "check_engine",
                "Spark checks scan the engine's table; with engine.sink "
                f"{s.engine.sink!r} allowed: auto, pyarrow",
                s.check_engine,
            )
        )
    return problems


def _min_commits_problems(s: "Scenario") -> list[Problem]:
    """Only the engine's runner counts the stream's commits as they happen."""
    if s.min_commits == 0 or s.system.kind == "instantbench":
        return []
    return [
        Problem(
            "min_commits",
            f"not with system.kind {s.system.kind!r}; allowed: 0 (leave it out), or "
            "system.kind instantbench",
            s.min_commits,
        )
    ]


def _storage_problems(s: "Scenario") -> list[Problem]:
    """A table in an object store lives in its bucket (a copy lands in the run directory)."""
    if s.table.storage.kind != "s3":
        return []
    problems = []
    if s.table.path is not None:
        problems.append(
            Problem(
                "table.path",
                "not with table.storage.kind s3 (the table lives in the "
                "bucket); allowed: leave table.path out",
                s.table.path,
            )
        )
    if s.engine.sink != "engine":
        problems.append(
            Problem("engine.sink", "with table.storage.kind s3 allowed: engine", s.engine.sink)
        )
    return problems


def _hosts_problems(s: "Scenario") -> list[Problem]:
    """A run's hosts reach nothing outside their own network."""
    endpoint = s.table.storage.endpoint
    if s.cluster.backend != "hosts" or s.table.storage.kind != "s3" or endpoint == "local":
        return []
    return [
        Problem(
            "table.storage.endpoint",
            "cluster.backend hosts reaches nothing outside the run's own network; allowed: "
            "local (the run's object store on a host of its own)",
            endpoint,
        )
    ]


def _host_problems(s: "Scenario", key: str, fault: Any) -> list[Problem]:
    """A network fault names hosts the run has (its workers, its store, its ZooKeeper)."""
    if not isinstance(fault, NetworkFault) or s.cluster.backend != "hosts":
        return []
    hosts = run_host_names(s)
    named = {
        "groups": [h for group in getattr(fault, "groups", None) or [] for h in group],
        "isolate": [getattr(fault, "isolate", None)],
        "link": getattr(fault, "link", None) or [],
        "target": [getattr(fault, "target", None)],
    }
    return [
        Problem(
            f"{key}.{field}",
            f"this run has no host {host!r}; allowed: {', '.join(hosts)}",
            host,
        )
        for field, names in named.items()
        for host in names
        if host is not None and host not in hosts
    ]


def _writer_problems(s: "Scenario") -> list[Problem]:
    problems = []
    bw = s.batch_writers
    if bw.count and (bw.op == "transfer") != (s.source.mode == "bank"):
        # Upserts would break the bank's constant total; transfers need accounts.
        problems.append(
            Problem(
                "batch_writers.op",
                f"with source.mode {s.source.mode!r} allowed: "
                + ("transfer" if s.source.mode == "bank" else "upsert, insert"),
                bw.op,
            )
        )
    if s.table.compaction.every_s and s.table.type != "mor":
        problems.append(
            Problem(
                "table.compaction.every_s",
                f"compaction needs table.type mor (table.type is {s.table.type!r}); allowed: 0",
                s.table.compaction.every_s,
            )
        )
    return problems


def _fault_problems(s: "Scenario", i: int, fault: Any) -> list[Problem]:
    key = f"faults.{i}"
    problems = []
    backends = CLUSTER_FAULTS.get(fault.kind)
    if backends and s.cluster.backend not in backends:
        problems.append(
            Problem(
                f"{key}.kind",
                f"{fault.kind} cannot be applied on cluster.backend {s.cluster.backend!r}; "
                f"allowed backends: {', '.join(backends)}",
                fault.kind,
            )
        )
    problems.extend(_reach_problems(s, key, fault))
    problems.extend(_host_problems(s, key, fault))
    problems.extend(_late_ack_problems(s, key, fault))
    run_s = s.run_s
    if fault.at_s >= run_s:
        problems.append(
            Problem(
                f"{key}.at_s",
                f"must fall inside the run; allowed: 0 <= at_s < {run_s:g} (warmup_s + duration_s)",
                fault.at_s,
            )
        )
    elif fault.at_s + fault.span_s > run_s:
        problems.append(
            Problem(
                f"{key}.duration_s",
                f"the fault must end by the end of the run; allowed: "
                f"at most {run_s - fault.at_s:g}",
                fault.span_s,
            )
        )
    every, count = getattr(fault, "every_s", None), getattr(fault, "count", None)
    if every and count and fault.at_s + every * (count - 1) >= run_s:
        problems.append(
            Problem(
                f"{key}.count",
                f"occurrences every {every:g} s from {fault.at_s:g} s must "
                f"start before {run_s:g} s; allowed: at most "
                f"{int((run_s - fault.at_s - 1e-9) // every) + 1}",
                count,
            )
        )
    alternatives = _skew_targets(s) if fault.kind == "clock_skew" else None
    target_problem = _target_problem(s, getattr(fault, "target", None) or "", alternatives)
    if target_problem:
        problems.append(Problem(f"{key}.target", target_problem, fault.target))
    return problems


def _reach_problems(s: "Scenario", key: str, fault: Any) -> list[Problem]:
    """A fault that could not change anything the engine does is refused (DESIGN.md:
    a clock nothing reads, storage that target never touches)."""
    if s.engine.sink != "engine" and fault.kind not in CLUSTER_FAULTS:
        return [
            Problem(
                f"{key}.kind",
                f"{fault.kind} acts through the table engine, and engine.sink is "
                f"{s.engine.sink!r} (plain Parquet: no coordinator, ACKs or table); allowed "
                f"with it: {', '.join(CLUSTER_FAULTS)} (or set engine.sink: engine)",
                fault.kind,
            )
        ]
    point = getattr(fault, "point", None)
    if (
        fault.kind == "coordinator_pause"
        and s.engine.truetime.shared_wait
        and point in SHARED_WAIT_UNREACHED
    ):
        return [
            Problem(
                f"{key}.point",
                "with engine.truetime.shared_wait the coordinator's instants are minted in "
                "a commit's TrueTime wait (all but the first), so this seam is never reached "
                "during the run; allowed: commit_truetime_wait, or any other point",
                point,
            )
        ]
    return []


def _late_ack_problems(s: "Scenario", key: str, fault: Any) -> list[Problem]:
    """A delayed or replayed ACK counts once the coordinator handled it; one due after the
    run ends is never delivered, so that occurrence could never take effect (the run would
    always end unknown)."""
    if fault.kind == "delay_ack":
        late, name = fault.delay_s, "delay_s"
    elif fault.kind == "stale_ack":
        late, name = STALE_REPLAY_AFTER_S, "at_s"
    else:
        return []
    run_s, every = s.run_s, fault.every_s
    last = fault.at_s
    if every:  # the schedule repeats it every_s while it starts inside the run
        last += every * ((run_s - fault.at_s) // every)
        last -= every if last >= run_s else 0
    if last >= run_s or last + late < run_s:
        return []  # at_s outside the run has its own message
    held = f"the last ACK it holds, at {last:g} s," if every else f"an ACK held at {last:g} s"
    room = f"delay_s < {run_s - last:g}" if name == "delay_s" else f"at_s < {run_s - late:g}"
    return [
        Problem(
            f"{key}.{name}",
            f"{held} would reach the coordinator {late:g} s later, after the run ends at "
            f"{run_s:g} s, so the fault could never take effect; allowed: {room}"
            + (" for the last occurrence (every_s repeats it to the end)" if every else ""),
            getattr(fault, name),
        )
    ]


def _skew_targets(s: "Scenario") -> str:
    """The clock_skew targets whose clock a time generation or heartbeat reads here."""
    forms = ["coordinator", "all"]
    if s.batch_writers.count:
        forms.append(_span("batch_writer", 0, s.batch_writers.count))
    return " | ".join(forms)


def _span(role: str, first: int, count: int) -> str:
    last = first + count - 1
    return f"{role}:{first}" if count == 1 else f"{role}:{first} .. {role}:{last}"


def _target_problem(s: "Scenario", target: str, alternatives: str | None = None) -> str | None:
    """`alternatives`: the targets that would work, named when the role has none."""
    match = re.fullmatch(r"(writer|batch_writer|worker):(\d+)", target)
    if not match:
        return None
    role, n = match.group(1), int(match.group(2))
    limit, source = {
        "writer": (s.engine.writers, "engine.writers"),
        "batch_writer": (s.batch_writers.count, "batch_writers.count"),
        "worker": (s.cluster.workers, "cluster.workers"),
    }[role]
    first = 1 if role == "worker" else 0  # cluster workers count from 1, like their addresses
    if first <= n < limit + first:
        return None
    if limit == 0:
        also = f"; allowed: {alternatives}" if alternatives else ""
        return f"there are no {role}s ({source} is 0){also}"
    return f"no such {role} ({source} is {limit}); allowed: {_span(role, first, limit)}"


def _matrix_keys(matrix: dict[str, list[Any]] | list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(where, dotted key) of every key the matrix varies: `matrix.KEY` or `matrix.N.KEY`."""
    if isinstance(matrix, list):
        return [(f"matrix.{n}.{key}", key) for n, point in enumerate(matrix) for key in point]
    return [(f"matrix.{key}", key) for key in matrix]


def _matrix_problems(s: "Scenario") -> list[Problem]:
    problems = []
    for where, key in _matrix_keys(s.matrix):
        if key.split(".")[0] in _NOT_IN_MATRIX:
            problems.append(Problem(where, "cannot be varied by a matrix"))
            continue
        try:
            resolve(type(s), key)
        except DottedKeyError as exc:
            problems.append(Problem(where, exc.message))
    return problems
