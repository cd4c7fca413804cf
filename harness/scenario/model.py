"""The scenario model: one pydantic class per section of the scenario file (DESIGN.md).

Defaults follow DESIGN.md's example. Cross-field rules live in `rules.py`.
"""

import dataclasses
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, PrivateAttr, create_model, model_validator
from pydantic_core import PydanticCustomError

from engine.config import Safety
from harness.scenario.base import (
    MAX_PARALLEL,
    MAX_RUN_S,
    Count,
    LatencyMs,
    Parallel,
    PosSeconds,
    Rows,
    Seconds,
    Strict,
)
from harness.scenario.faults import Fault
from harness.scenario.keys import get_dotted
from harness.scenario.rate import ConstantRate, Rate
from harness.scenario.rules import cross_field_problems

CheckName = Literal["exactly_once", "timeline", "unique_keys", "bank", "isolation"]


class Cluster(Strict):
    backend: Literal["local", "standalone", "docker"] = "local"
    workers: Parallel = 2
    cores_per_worker: Parallel = 1


class Storage(Strict):
    latency_ms: LatencyMs = 0


class Compaction(Strict):
    every_s: Seconds = 0  # 0 = off; mor tables only


class TableSpec(Strict):
    type: Literal["cow", "mor"] = "cow"
    key: Literal["id"] = "id"  # the harness's rows carry their record key in `id`
    file_groups: Annotated[int, Field(ge=1, le=4096)] = 8
    index: Literal["bucket", "dynamic"] = "bucket"
    storage: Storage = Field(default_factory=Storage)
    compaction: Compaction = Field(default_factory=Compaction)
    path: Annotated[str, Field(min_length=1)] | None = None  # None: in the run directory


class Source(Strict):
    mode: Literal["append", "upsert", "bank"] = "append"
    rate: Rate = Field(default_factory=ConstantRate)
    keys: Annotated[int, Field(ge=1, le=1_000_000_000)] = 100000
    accounts: Annotated[int, Field(ge=2, le=1_000_000)] = 8  # a transfer needs two
    payload_bytes: Annotated[int, Field(ge=0, le=1 << 20)] = 100


class TrueTime(Strict):
    max_skew_ms: LatencyMs = 200


# The engine's safety switches, one key each (all on by default); the detection table turns
# each off in a scenario. Derived from engine.config.Safety so the two never drift apart.
SafetySpec = create_model(
    "SafetySpec",
    __base__=Strict,
    **{f.name: (bool, f.default) for f in dataclasses.fields(Safety)},
)


class EngineSpec(Strict):
    instant_mode: Literal["async", "blocking"] = "async"
    sink: Literal["engine", "raw_parquet"] = "engine"
    checkpoint_interval_s: Annotated[float, Field(ge=0.1, le=3600)] = 2
    writers: Parallel = 2
    write_batch_rows: Rows = 50000
    truetime: TrueTime = Field(default_factory=TrueTime)
    commit_ack_timeout_s: PosSeconds = 60
    safety: SafetySpec = Field(default_factory=SafetySpec)


class BatchWriters(Strict):
    count: Annotated[int, Field(ge=0, le=MAX_PARALLEL)] = 0
    every_s: PosSeconds = 1
    op: Literal["upsert", "insert", "transfer"] = "upsert"
    rows_per_commit: Rows = 1000


class Readers(Strict):
    concurrent: Annotated[int, Field(ge=0, le=MAX_PARALLEL)] = 1
    every_s: PosSeconds = 5


class Slo(Strict):
    freshness_p99_s: PosSeconds | None = 10


class Scenario(Strict):
    name: Annotated[str, Field(pattern=r"^[a-z0-9-]+$", max_length=64)]
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 42
    warmup_s: Seconds = 10
    duration_s: Annotated[float, Field(ge=1, le=MAX_RUN_S)] = 60
    cluster: Cluster = Field(default_factory=Cluster)
    table: TableSpec = Field(default_factory=TableSpec)
    source: Source = Field(default_factory=Source)
    engine: EngineSpec = Field(default_factory=EngineSpec)
    batch_writers: BatchWriters = Field(default_factory=BatchWriters)
    faults: list[Fault] = Field(default_factory=list)
    readers: Readers = Field(default_factory=Readers)
    checks: list[CheckName] = Field(
        default_factory=lambda: ["exactly_once", "timeline", "unique_keys", "isolation"]
    )
    # Where the whole-table checks (exactly_once, unique_keys) run: in the runner with
    # pyarrow, or on Spark; auto picks Spark when the table stores more rows than
    # harness.runner.spark_checks.SPARK_ABOVE_ROWS.
    check_engine: Literal["auto", "pyarrow", "spark"] = "auto"
    slo: Slo = Field(default_factory=Slo)
    matrix: dict[str, Annotated[list[Any], Field(min_length=1)]] = Field(default_factory=dict)
    repeat: Count = 1

    # Where the scenario came from, for error messages about it (not part of the file).
    _source: str = PrivateAttr(default="<scenario>")

    @model_validator(mode="after")
    def _cross_field(self) -> "Scenario":
        problems = cross_field_problems(self)
        if problems:
            # A custom error keeps pydantic's flow; errors.py unpacks the problems by key.
            raise PydanticCustomError(
                "scenario_rules", "{summary}", {"summary": problems[0].text(), "problems": problems}
            )
        return self

    @property
    def run_s(self) -> float:
        """Seconds from run start to run end: the warm-up comes before the measured duration."""
        return self.warmup_s + self.duration_s

    @property
    def source_file(self) -> str:
        return self._source

    def get(self, dotted_key: str) -> Any:
        """The value at a dotted key such as `engine.instant_mode` or `faults.0.at_s`."""
        return get_dotted(self, dotted_key)

    def to_yaml(self) -> str:
        """The scenario as resolved (every default filled in); loads back to an equal model."""
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)
