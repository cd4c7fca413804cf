"""Start and stop the readers and batch writers a scenario asks for."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.config import Safety
from engine.locks.registry import LockSpec
from harness.faults.storage import StorageFaults
from harness.history import HistoryWriter
from harness.scenario import Scenario
from harness.workload.batch_writers import BatchWriterThread, InsertRace
from harness.workload.readers import ReaderThread


@dataclass
class Background:
    readers: list[ReaderThread] = field(default_factory=list)
    writers: list[BatchWriterThread] = field(default_factory=list)

    def stop(self) -> None:
        for writer in self.writers:  # all at once: none waits at the insert race for another
            writer.stop_event.set()
        threads: list[BatchWriterThread | ReaderThread] = [*self.writers, *self.readers]
        for thread in threads:
            thread.stop()


def start_background(
    scenario: Scenario,
    table_path: str,
    history: HistoryWriter,
    storage_faults: StorageFaults | None = None,
    lock_spec: LockSpec | None = None,
) -> Background:
    """`storage_faults`: installed in every reader's and batch writer's table storage, as in
    the driver and the writer tasks (a storage fault reaches every process of the table).
    `lock_spec`: the run's table lock, which the batch writers take."""
    if scenario.engine.sink == "raw_parquet":
        return Background()
    bank = scenario.source.mode == "bank"
    readers = [
        ReaderThread(i, table_path, scenario.readers.every_s, history, bank, scenario.seed)
        for i in range(scenario.readers.concurrent)
    ]
    bw = scenario.batch_writers
    safety = Safety(**scenario.engine.safety.model_dump())
    race = InsertRace(max(1, bw.count), bw.rows_per_commit)
    writers = [
        BatchWriterThread(
            i,
            table_path,
            bw.op,
            bw.every_s,
            bw.rows_per_commit,
            scenario.source.keys,
            scenario.source.accounts,
            safety,
            int(scenario.engine.truetime.max_skew_ms),
            history,
            scenario.seed,
            race,
            lock_spec,
        )
        for i in range(bw.count)
    ]
    threads: list[ReaderThread | BatchWriterThread] = [*readers, *writers]
    for thread in threads:
        if storage_faults is not None:
            storage_faults.install(thread.table.storage)
        thread.start()
    return Background(readers, writers)
