"""The scenario model: one pydantic class per section of the scenario file (DESIGN.md).

Defaults follow DESIGN.md's example. Cross-field rules live in `rules.py`.
"""

from typing import Annotated, Any, Literal

import yaml
from pydantic import BeforeValidator, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from harness.scenario.base import (
    MAX_COUNT,
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
from harness.scenario.compare_plan import ComparePlan
from harness.scenario.faults import Fault
from harness.scenario.keys import get_dotted
from harness.scenario.rate import ConstantRate, Rate
from harness.scenario.rules import cross_field_problems
from harness.scenario.spark_conf import check_spark_conf
from harness.scenario.system import System, default_checks

# table.storage (kind s3): `local` or an http(s) URL; an S3 bucket name (3-63 characters).
S3_ENDPOINT = r"^(local|https?://[^\s/]+(/\S*)?)$"
S3_BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"

CheckName = Literal[
    "exactly_once",
    "timeline",
    "unique_keys",
    "bank",
    "isolation",
    "hudi_reader",
    "hudi_java_reader",
]
DEFAULT_CHECKS: tuple[CheckName, ...] = (
    "exactly_once",
    "timeline",
    "unique_keys",
    "isolation",
    "hudi_reader",
)


class Cluster(Strict):
    """Where Spark runs and how big it is."""

    backend: Literal["local", "standalone", "docker", "hosts"] = "local"
    """local: one JVM (local[N,M], so a crashed task is retried); standalone: a master and
    workers as processes on their own loopback addresses; docker: the same as containers;
    hosts: the same as processes on hosts of their own (a network namespace each, linked by
    the run's own bridge: the runner, the driver, the master, each worker, the object store
    and ZooKeeper), where network faults act."""
    workers: Parallel = 2
    """Spark workers (standalone, docker). In local mode engine.writers sets the cores."""
    cores_per_worker: Parallel = 1
    """Cores of each worker (standalone, docker)."""
    spark_conf: Annotated[dict[str, str], BeforeValidator(check_spark_conf)] = Field(
        default_factory=dict
    )
    """Extra Spark settings of the pipeline driver, e.g. {spark.sql.shuffle.partitions: 4}.
    Settings the harness depends on (the master, the checkpoint location, the executors'
    Python...) are refused."""


class Storage(Strict):
    """The table's storage."""

    kind: Literal["local", "s3"] = "local"
    """local: a folder (the run directory's table/, or table.path); s3: an S3-compatible
    object store (conditional writes instead of rename and link)."""
    endpoint: Annotated[str, Field(pattern=S3_ENDPOINT)] | None = None
    """kind s3: `local` (the harness starts an S3-compatible server on loopback for the
    run, and stops it) or the store's URL (credentials from the AWS environment variables)."""
    bucket: Annotated[str, Field(pattern=S3_BUCKET)] | None = None
    """kind s3: the bucket (created on a local endpoint; the table is `<bucket>/<run id>`)."""
    latency_ms: LatencyMs = 0
    """Milliseconds added to every storage operation, in the driver and every executor
    (a slow object store)."""

    @model_validator(mode="after")
    def _s3_keys(self) -> "Storage":
        given = [k for k in ("endpoint", "bucket") if getattr(self, k) is not None]
        if self.kind == "local" and given:
            raise ValueError(f"{', '.join(given)}: only with kind s3 (kind is local)")
        if self.kind == "s3" and len(given) != 2:
            raise ValueError("kind s3 needs endpoint (local or a URL) and bucket")
        return self


class Compaction(Strict):
    """The compaction table service (mor tables)."""

    every_s: Seconds = 0
    """mor tables: schedule a compaction every N seconds, while writes are inflight (0 = off)."""


class Services(Strict):
    """Hudi's table services, run by the stream's driver while the stream writes (and
    while faults fire): archival and cleaning (0 = off)."""

    archive_keep: Annotated[int, Field(ge=0, le=100_000)] = 0
    """Archive the oldest instants, keeping this many commits (data writes and compactions)
    on the active timeline, as Hudi's `hoodie.keep.min.commits`, and every instant requested
    after the earliest of them."""
    clean_retain_commits: Annotated[int, Field(ge=0, le=100_000)] = 0
    """Clean file slices no read as of the last N commits needs (KEEP_LATEST_COMMITS);
    reads as of an older time are then out of the retention window."""


class TableSpec(Strict):
    """The table the stream writes: an Apache Hudi 1.x table."""

    type: Literal["cow", "mor"] = "cow"
    """cow: copy on write (an update rewrites the base file); mor: merge on read (updates go
    to log files, merged by compaction)."""
    key: Literal["id"] = "id"  # the harness's rows carry their record key in `id`
    """The record key column."""
    file_groups: Annotated[int, Field(ge=1, le=4096)] = 8
    """File groups the table is split into."""
    index: Literal["bucket", "dynamic"] = "bucket"
    """bucket: a hash of the key picks the file group; dynamic: a new key goes to the smallest
    file group and an index maps key -> file group."""
    storage: Storage = Field(default_factory=Storage)
    """The table's storage."""
    compaction: Compaction = Field(default_factory=Compaction)
    """The compaction table service (mor tables)."""
    services: Services = Field(default_factory=Services)
    """Archival and cleaning, run while the stream writes."""
    path: Annotated[str, Field(min_length=1)] | None = None
    """Where the table lives; none: in the run directory (table/)."""


class Source(Strict):
    """The stream's rows: what they are and how fast they come."""

    mode: Literal["append", "upsert", "bank"] = "append"
    """append: unique ids; upsert: keys reused from source.keys; bank: transfers between
    source.accounts accounts."""
    rate: Rate = Field(default_factory=ConstantRate)
    """Rows per second over the run, by shape: constant, steps, ramp, spike or unbounded."""
    keys: Annotated[int, Field(ge=1, le=1_000_000_000)] = 100000
    """upsert mode: the key space the rows' keys come from."""
    accounts: Annotated[int, Field(ge=2, le=1_000_000)] = 8
    """bank mode: the number of accounts (a transfer needs two)."""
    payload_bytes: Annotated[int, Field(ge=0, le=1 << 20)] = 100
    """Payload bytes per row."""


class TrueTime(Strict):
    """TrueTime instant generation."""

    max_skew_ms: LatencyMs = 200
    """The clock uncertainty bound (ms): a new instant time waits it out, so that it is later
    than every earlier one while clocks disagree by at most this much."""
    shared_wait: bool = False
    """One wait for two times (not in Hudi): the stream's commit also mints the next
    instant's requested time, 1 ms after its completion time, under the same lock hold and
    TrueTime wait (in either instant_mode)."""


class SafetySpec(Strict):
    """The engine's safety switches: each turns one protection on."""

    # One key per switch of engine.config.Safety, all on by default (the detection table
    # turns each off in a scenario); tests/unit/harness/test_schema.py checks the two agree.
    occ: bool = True
    """Optimistic concurrency control: of two writers that touch a common file group on the same
    base, the second aborts."""
    pk_check: bool = True
    """Primary-key check: a new key already stored in another file group aborts the commit (dynamic
    index)."""
    put_if_absent: bool = True
    """Instant files are created only if absent, so two writers cannot both own one requested time,
    and only a pending instant can complete."""
    strict_monotonic: bool = True
    """Every generated instant time is greater than every earlier one, whatever the clocks say."""
    completion_time_slicing: bool = True
    """File slices are cut by completion time, so a compaction scheduled while a log write is
    inflight cannot hide it."""
    subsume_acks: bool = True
    """ACK n commits every buffered instant with a checkpoint id below n, so a lost earlier ACK
    loses nothing."""
    coordinator_state: bool = True
    """The coordinator snapshots WriteMeta and restores it after a crash (restored instants are
    recommitted exactly once)."""
    fencing: bool = True
    """A newer coordinator's epoch stops an older, paused one from touching the timeline; a lock
    holder whose lease ran out cannot complete."""
    truetime_wait: bool = True
    """A new instant time waits out the TrueTime bound (engine.truetime.max_skew_ms)."""
    lazy_rollback: bool = True
    """Failed writes are rolled back once their heartbeat expired (off: every pending instant
    another writer started, live or not)."""
    verify_writes: bool = True
    """A data file that did not land whole on storage fails its write."""
    cow_upsert_blocking: bool = True
    """COW upserts generate instants in blocking mode, as Hudi 1.1 does (an async merge would read a
    base file whose instant has not committed)."""
    markers: bool = True
    """Every data file is recorded by a marker first; files of an instant that its commit does not
    list (failed attempts, superseded flushes, temp files) are deleted before it completes, so a
    reader that lists storage sees exactly the committed files."""
    checkpoint_ordered_instants: bool = True
    """The stream's instants follow its checkpoints: a request naming checkpoint n first mints
    every earlier checkpoint that has none yet, so requested times ascend with checkpoint ids
    (Hudi's readers merge logs in requested-time order: off, older rows can win)."""
    clean_retention: bool = True
    """The cleaner keeps every file a read as of one of the last `clean_retain_commits` commits
    needs (off: only each file group's latest slice, so files reads inside the window need are
    deleted)."""


class Lock(Strict):
    """The table lock every writer takes to create and complete instants."""

    provider: Literal["file", "service", "storage", "zookeeper"] = "file"
    """file: a lease in the table's storage (a register of put-if-absent versions);
    service: the stream coordinator's lock service, over RPC; storage: one lock object in
    the table's storage changed by conditional writes, as Hudi 1.1's storage-based lock
    provider; zookeeper: a real ZooKeeper that the harness starts on loopback for the run,
    through kazoo's lock recipe, as Hudi's ZooKeeper lock provider."""
    lease_s: Annotated[float, Field(ge=1, le=600)] = 10
    """Seconds a holder that stopped renewing keeps the lock (ZooKeeper: the session
    timeout); a waiter then takes it over and fences the old holder off."""


class EngineSpec(Strict):
    """The streaming write protocol: instant generation, checkpoints, writers, safety."""

    instant_mode: Literal["async", "blocking"] = "async"
    """async: an instant request never waits (batch n+1 writes while batch n commits);
    blocking: it waits until every earlier instant committed."""
    sink: Literal["engine", "raw_parquet"] = "engine"
    """engine: the table engine; raw_parquet: the same batches as plain Parquet files (the
    throughput ceiling)."""
    checkpoint_interval_s: Annotated[float, Field(ge=0.1, le=3600)] = 2
    """Seconds per Spark micro-batch: one micro-batch is one checkpoint interval."""
    writers: Parallel = 2
    """Writer tasks per micro-batch (in local mode also Spark's cores)."""
    write_batch_rows: Rows = 50000
    """A writer flushes its buffer eagerly once it holds this many rows."""
    truetime: TrueTime = Field(default_factory=TrueTime)
    """TrueTime instant generation."""
    commit_ack_timeout_s: PosSeconds = 60
    """Blocking mode: how long an instant request waits for earlier instants to commit
    before it fails."""
    lock: Lock = Field(default_factory=Lock)
    """The table lock: which provider (file, service, storage, zookeeper) and its lease."""
    safety: SafetySpec = Field(default_factory=SafetySpec)
    """The engine's safety switches (all on by default); a detection scenario turns one off."""


class BatchWriters(Strict):
    """Independent OCC writers beside the stream (a backfill, a fix-up job)."""

    count: Annotated[int, Field(ge=0, le=MAX_PARALLEL)] = 0
    """How many batch writers (0 = none)."""
    every_s: PosSeconds = 1
    """Seconds between one batch writer's commits."""
    op: Literal["upsert", "insert", "transfer"] = "upsert"
    """upsert; insert (new keys from one key space shared by all batch writers, so two can
    insert the same new key); transfer (bank mode: read-modify-write)."""
    rows_per_commit: Rows = 1000
    """Rows in each batch writer commit."""


class Readers(Strict):
    """Readers beside the writes: snapshot, as-of and incremental reads."""

    concurrent: Annotated[int, Field(ge=0, le=MAX_PARALLEL)] = 1
    """How many readers (0 = none)."""
    every_s: PosSeconds = 5
    """Seconds between one reader's reads."""


class Slo(Strict):
    """Service-level goals (`instantbench capacity` searches for the rate that holds them)."""

    freshness_p99_s: PosSeconds | None = 10
    """p99 of freshness (s: now minus the event time of the newest visible row); none = no
    goal."""


class Scenario(Strict):
    """An instantbench scenario: a Spark stream through the table engine, with faults and
    checks (DESIGN.md "Scenario file")."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9-]+$", max_length=64)]
    """Names the run directory: lower-case letters, digits and dashes."""
    system: System = Field(default_factory=System)
    """The system under test: instantbench's engine, or Apache Hudi's own Spark writer."""
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 42
    """Seeds the rows' content and every random choice (fault targets, points)."""
    warmup_s: Seconds = 10
    """Seconds run before measuring; excluded from the metrics."""
    duration_s: Annotated[float, Field(ge=1, le=MAX_RUN_S)] = 60
    """Measured seconds, after the warm-up."""
    min_commits: Annotated[int, Field(ge=0, le=MAX_COUNT)] = 0
    """The run lasts past its duration until the stream has committed this many instants
    (counted from the drivers' history), at most the settle limit longer: a run whose
    evidence needs commits, not seconds, gets them on a slow machine too. instantbench's
    engine only."""
    cluster: Cluster = Field(default_factory=Cluster)
    """Where Spark runs."""
    table: TableSpec = Field(default_factory=TableSpec)
    """The table the stream writes."""
    source: Source = Field(default_factory=Source)
    """The stream's rows."""
    engine: EngineSpec = Field(default_factory=EngineSpec)
    """The streaming write protocol."""
    batch_writers: BatchWriters = Field(default_factory=BatchWriters)
    """Independent OCC writers beside the stream."""
    faults: list[Fault] = Field(default_factory=list)
    """Faults to inject, each by `kind` (`instantbench faults` lists the kinds and keys)."""
    readers: Readers = Field(default_factory=Readers)
    """Readers beside the writes."""
    checks: list[CheckName] = Field(default_factory=lambda: list(DEFAULT_CHECKS))
    """Checks to run on the finished run (bank needs source.mode bank); by default the
    system's own list (instantbench: exactly_once, timeline, unique_keys, isolation,
    hudi_reader)."""
    check_engine: Literal["auto", "pyarrow", "spark"] = "auto"
    """Where the whole-table checks (exactly_once, unique_keys) run: pyarrow (in the runner),
    spark, or auto (Spark when the table stores more rows than
    harness.runner.spark_checks.SPARK_ABOVE_ROWS)."""
    slo: Slo = Field(default_factory=Slo)
    """Service-level goals."""
    matrix: (
        dict[str, Annotated[list[Any], Field(min_length=1)]]
        | Annotated[list[Annotated[dict[str, Any], Field(min_length=1)]], Field(min_length=1)]
    ) = Field(default_factory=dict)
    """Variants: a dotted key -> the values to try (e.g. engine.instant_mode: [blocking,
    async]), one variant per combination; or a list of variants, each a dotted key -> its
    value (e.g. [{engine.instant_mode: blocking}, {engine.instant_mode: async},
    {system.kind: hudi}]), for variants that are not a product."""
    repeat: Count = 1
    """Runs per variant (`compare` interleaves them; with compare.decide, at most this many)."""
    compare: ComparePlan = Field(default_factory=ComparePlan)
    """When `compare` has run enough pairs."""

    # Where the scenario came from, for error messages about it (not part of the file).
    _source: str = PrivateAttr(default="<scenario>")

    @model_validator(mode="before")
    @classmethod
    def _system_checks(cls, data: Any) -> Any:
        return default_checks(data)

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
