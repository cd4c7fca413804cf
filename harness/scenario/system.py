"""The `system` section: which system under test the scenario's stream writes through, and
the rules that keep a scenario to what that system can do (DESIGN.md "Systems under test")."""

from typing import TYPE_CHECKING, Any, Literal

from harness.scenario.base import Strict
from harness.scenario.errors import Problem
from harness.systems.capabilities import Capabilities
from harness.systems.registry import capabilities_of

if TYPE_CHECKING:
    from harness.scenario.model import Scenario


class System(Strict):
    """The system under test (instantbench's engine by default)."""

    kind: Literal["instantbench", "hudi", "delta", "iceberg"] = "instantbench"
    """instantbench: this project's engine; hudi: Apache Hudi's own Spark writer (on a Spark
    runtime of its own); delta, iceberg: Delta Lake's and Apache Iceberg's own Spark writers
    (on the project's pyspark); their jars are fetched the first time a run needs them."""
    version: str | None = None
    """The system's version (hudi 1.2.0, delta 4.4.0, iceberg 1.11.0: the defaults); none
    for instantbench."""
    catalog: Literal["hadoop", "jdbc"] | None = None
    """Iceberg's catalog: hadoop (the default: metadata versions swapped by a rename, safe
    for one writing process) or jdbc (a SQLite file in the run's folder whose row update
    is the commit, serialising commits across processes: what batch writers need)."""


def default_checks(data: Any) -> Any:
    """A scenario that names a system and no checks gets that system's checks."""
    if not isinstance(data, dict) or "checks" in data:
        return data
    system = data.get("system")
    caps = capabilities_of(system.get("kind", "")) if isinstance(system, dict) else None
    if caps is None:
        return data
    source = data.get("source")
    bank = isinstance(source, dict) and source.get("mode") == "bank"
    return {**data, "checks": [c for c in caps.checks if c != "bank" or bank]}


def system_problems(s: "Scenario") -> list[Problem]:
    caps = capabilities_of(s.system.kind)
    if caps is None:
        return _engine_problems(s)
    return [
        *_version_problems(s, caps),
        *_catalog_problems(s, caps),
        *_shape_problems(s, caps),
        *_check_problems(s, caps),
        *[p for i, f in enumerate(s.faults) for p in _fault_problems(caps, i, f)],
        *_fault_lock_problems(s, caps),
    ]


def _engine_problems(s: "Scenario") -> list[Problem]:
    """The engine has no version, and its batch writers stop at named seams."""
    problems = [
        Problem(f"faults.{i}.point", NOT_THE_ENGINE_S[point], point)
        for i, f in enumerate(s.faults)
        if (point := getattr(f, "point", None)) in NOT_THE_ENGINE_S
    ]
    if s.system.catalog is not None:
        problems.append(
            Problem(
                "system.catalog",
                "instantbench keeps its own timeline, not a catalog; allowed: leave it out",
                s.system.catalog,
            )
        )
    if s.system.version is not None:
        problems.append(
            Problem(
                "system.version",
                "instantbench has no version to choose; allowed: leave it out",
                s.system.version,
            )
        )
    return problems


MID_RETRY_ON_ENGINE = (
    "mid_retry is Hudi's: its streaming sink retries a failed batch inside the micro-batch; "
    "the engine's driver restarts the query from its checkpoint instead (point: "
    "after_coordinator_snapshot, after_ack_before_commit, mid_commit, after_fencing_check, "
    "after_commit, after_spark_commit_before_ack)"
)
LOCK_HELD_ON_ENGINE = (
    "lock_held is where Hudi's writer is seen holding its ZooKeeper lock from outside its "
    "JVM; the engine's batch writers stop at a named seam instead (faults: "
    "`instantbench faults batch_writer_pause`)"
)
# Points of another system's seams, which the engine's faults cannot take.
NOT_THE_ENGINE_S = {"lock_held": LOCK_HELD_ON_ENGINE, "mid_retry": MID_RETRY_ON_ENGINE}


def _fault_lock_problems(s: "Scenario", caps: Capabilities) -> list[Problem]:
    provider = s.engine.lock.provider
    return [
        Problem(
            "engine.lock.provider",
            f"{f.kind} on {caps.kind} acts through the lock's sessions: "
            f"{caps.refusal(f'{f.kind}:{provider}')}; allowed: {_allowed(providers)}",
            provider,
        )
        for f in s.faults
        if (providers := caps.fault_lock_providers.get(f.kind)) and provider not in providers
    ]


def _allowed(values: tuple[str, ...]) -> str:
    return ", ".join(values) if values else "none"


def _version_problems(s: "Scenario", caps: Capabilities) -> list[Problem]:
    if s.system.version is None or s.system.version in caps.versions:
        return []
    return [
        Problem(
            "system.version",
            f"{caps.kind} {s.system.version} is not one the "
            f"harness runs; allowed: {_allowed(caps.versions)}",
            s.system.version,
        )
    ]


def _catalog_problems(s: "Scenario", caps: Capabilities) -> list[Problem]:
    catalog = s.system.catalog
    if catalog is not None and catalog not in caps.catalogs:
        what = f"{caps.kind} has no catalog to choose" if not caps.catalogs else "not a catalog"
        return [Problem("system.catalog", f"{what}; allowed: {_allowed(caps.catalogs)}", catalog)]
    chosen = catalog or (caps.catalogs[0] if caps.catalogs else None)
    if not s.batch_writers.count or chosen is None or chosen in caps.shared_catalogs:
        return []
    reason = caps.refusal(f"catalog:{chosen}")
    return [
        Problem(
            "system.catalog",
            f"batch writers are processes of their own: {reason}; allowed: "
            f"{_allowed(caps.shared_catalogs)}",
            chosen,
        )
    ]


def _shape_problems(s: "Scenario", caps: Capabilities) -> list[Problem]:
    shape = [
        ("source.mode", s.source.mode, caps.modes),
        ("table.type", s.table.type, caps.table_types),
        ("cluster.backend", s.cluster.backend, caps.backends),
    ]
    problems = [
        Problem(key, f"{caps.refusal(str(value))} on {caps.kind}; allowed: {_allowed(ok)}", value)
        for key, value, ok in shape
        if value not in ok
    ]
    if s.batch_writers.count > caps.max_batch_writers:
        why = caps.refusals.get("batch_writers")
        problems.append(
            Problem(
                "batch_writers.count",
                f"{caps.kind} runs at most {caps.max_batch_writers} batch writers"
                + (f": {why}" if why else "")
                + f"; allowed: at most {caps.max_batch_writers}",
                s.batch_writers.count,
            )
        )
    else:  # what the writers do and share, once there may be writers at all
        problems += _batch_writer_problems(s, caps)
    if s.table.storage.kind != "local":
        problems.append(
            Problem(
                "table.storage.kind",
                f"{caps.kind} tables in an object store are not built yet; allowed: local",
                s.table.storage.kind,
            )
        )
    return problems


def _batch_writer_problems(s: "Scenario", caps: Capabilities) -> list[Problem]:
    if not s.batch_writers.count:
        return []
    shape = [
        ("batch_writers.op", s.batch_writers.op, caps.batch_writer_ops, "batch writers"),
        ("engine.lock.provider", s.engine.lock.provider, caps.lock_providers, "locks"),
    ]
    return [
        Problem(
            key,
            f"{what}: {caps.refusal(str(value))} on {caps.kind}; allowed: {_allowed(ok)}",
            value,
        )
        for key, value, ok, what in shape
        if value not in ok
    ]


def _check_problems(s: "Scenario", caps: Capabilities) -> list[Problem]:
    return [
        Problem(
            "checks",
            f"{check} cannot judge {caps.kind}: {caps.refusal(check)}; allowed: "
            f"{_allowed(caps.checks)}",
            s.checks,
        )
        for check in s.checks
        if check not in caps.checks
    ]


_OUTSIDE_JVM = "seam seen from outside its JVM"


def _fault_problems(caps: Capabilities, i: int, fault: Any) -> list[Problem]:
    if fault.kind not in caps.faults:
        return [
            Problem(
                f"faults.{i}.kind",
                f"{fault.kind} cannot act on {caps.kind}: "
                f"{caps.refusal(fault.kind)}; allowed: {_allowed(tuple(caps.faults))}",
                fault.kind,
            )
        ]
    refused = [k for k in caps.refused_fault_keys if getattr(fault, k, None) is not None]
    if refused:
        key = refused[0]
        return [Problem(f"faults.{i}.{key}", f"{caps.refusal(key)}", getattr(fault, key))]
    for name, least in caps.fault_minimums.items():
        kind, key = name.split(".", 1)
        value = getattr(fault, key, None) if fault.kind == kind else None
        if value is not None and value < least:
            return [
                Problem(f"faults.{i}.{key}", f"{caps.refusal(name)}; allowed: >= {least}", value)
            ]
    targets = caps.fault_targets.get(fault.kind)
    target = getattr(fault, "target", None)
    if targets and target not in targets:
        return [
            Problem(
                f"faults.{i}.target",
                f"{fault.kind} cannot reach {target} on {caps.kind}; allowed: {_allowed(targets)}",
                target,
            )
        ]
    points = caps.faults[fault.kind]
    point = getattr(fault, "point", None)
    if points and point not in points:
        return [
            Problem(
                f"faults.{i}.point",
                f"{fault.kind} on {caps.kind} can fire only at a "
                f"{caps.refusals.get(f'{fault.kind}.point', _OUTSIDE_JVM)}; allowed: "
                f"{_allowed(points)}",
                point,
            )
        ]
    return []
