"""A system's batch writers from the project's side: each a Spark application of its own
(the system's batch_writer.py on its runtime) beside the stream, started with it and
stopped after it. A writer may first open the bank's accounts (Hudi's does, with
`open_accounts`; with `open_only` it exits after). Each transaction a writer reports
becomes a `txn` history event (docs/history.md) with the time it ended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.history import HistoryWriter
from harness.history_events import Kind
from harness.runner.errors import RunError
from harness.scenario import Scenario
from harness.systems.spark_stream.driver_process import DriverProcess
from harness.systems.spark_stream.runtime_cache import SparkRuntime
from harness.systems.spark_stream.sink_system import SinkSystem
from harness.workload.batch_writers import MAX_ATTEMPTS, writer_seed

START_TIMEOUT_S = 180.0
# What a format's batch writer shares with the stream's driver: the same table and session.
SINK_SHARED_KEYS = ("jars", "format", "session", "table_sql", "spark_conf")


def sink_writer_configs(
    system: SinkSystem, scenario: Scenario, stream: dict[str, Any], work: Path
) -> list[dict[str, Any]]:
    """One config per batch writer of a format's table (harness/systems/spark_stream/
    batch_writer.py)."""
    writers = scenario.batch_writers
    return [
        {
            **{key: stream[key] for key in SINK_SHARED_KEYS},
            "master": "local[1]",
            "writer": f"batch_writer:{index}",
            "every_s": writers.every_s,
            "accounts": scenario.source.accounts,
            "seed": writer_seed(scenario.seed, index),
            "max_attempts": MAX_ATTEMPTS,
            "conflicts": list(system.conflicts),
            "indeterminate": list(system.indeterminate),
            "table_timeout_s": START_TIMEOUT_S,
            "stop_file": str(work / f"STOP-batch-writer-{index}"),
        }
        for index in range(writers.count)
    ]


@dataclass
class BatchWriters:
    runtime: SparkRuntime
    configs: list[dict[str, Any]]
    logs: Path
    script: Path  # the system's batch_writer.py
    label: str  # how errors name the system
    processes: list[DriverProcess] = field(default_factory=list)

    def _start(self, config: dict[str, Any]) -> DriverProcess:
        name = config["writer"].replace(":", "-")
        process = DriverProcess(self.runtime, config, self.logs, name, script=self.script)
        self.processes.append(process)
        return process

    def _wait(self, process: DriverProcess, event: str) -> None:
        line = process.wait_for((event,), START_TIMEOUT_S)
        if line is None:
            tail = "\n".join(process.log_path.read_text().splitlines()[-5:])
            raise RunError(
                f"a batch writer of {self.label} did not report {event}; see "
                f"{process.log_path}: {tail}"
            )

    def launch(self) -> None:
        """Start every writer: the opener commits the accounts, the rest wait for a
        committed table (batch_writer.py) while their JVMs start."""
        for config in self.configs:
            self._start(config)

    def ready(self) -> None:
        """Once the accounts are committed and every writer runs its transactions."""
        if not self.processes:
            return
        if self.configs[0].get("open_accounts"):
            self._wait(self.processes[0], "opened")
        if not self.configs[0].get("open_only"):
            for process in self.processes:
                self._wait(process, "started")

    def exited(self) -> DriverProcess | None:
        """A writer that exited by itself mid-run (the opener alone may end early)."""
        running = self.processes[1:] if self.configs[0].get("open_only") else self.processes
        return next((p for p in running if p.process.poll() is not None), None)

    def each_committed(self) -> bool:
        """Every transferring writer committed at least one transaction: until then the
        run has not tested what the writers are there for."""
        running = self.processes[1:] if self.configs[0].get("open_only") else self.processes
        return all(any(t.get("outcome") == "ok" for t in p.events("txn")) for p in running)

    def request_stop(self) -> None:
        for process in self.processes:
            process.stop_file.touch()

    def stop(self, timeout_s: float) -> list[int]:
        """Ask every writer to stop at once (each ends its transaction first), then wait."""
        self.request_stop()
        return [process.stop(timeout_s) for process in self.processes]

    def record(self, history: HistoryWriter) -> None:
        """Each reported transaction as a `txn` event, at the time it ended."""
        for process in self.processes:
            for txn in process.events("txn"):
                history.record(
                    Kind.TXN,
                    t=txn["t"],
                    writer=txn["writer"],
                    op=txn["op"],
                    instant=None,  # MERGE INTO does not say which commit it made
                    outcome=txn["outcome"],
                    attempts=txn["attempts"],
                    latency_ms=txn["latency_ms"],
                    rows=len(txn.get("accounts", [])),
                    error=txn.get("error"),
                    accounts=txn.get("accounts"),  # the transfer: from, to
                    amount=txn.get("amount"),
                )
