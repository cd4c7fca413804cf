"""Hudi's batch writers' configs: each a Spark application of its own (batch_writer.py on
the Hudi runtime, run by harness/systems/spark_stream/batch_writers.py) beside the
stream, under the run's lock.

In bank mode the first writer commits the opening balances before anything else writes
(the table's first commit, so every read of it holds every account); with no batch
writers a writer of the same script opens the accounts and exits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.pipeline.events import OPENING_BALANCE
from harness.scenario import Scenario
from harness.workload.batch_writers import MAX_ATTEMPTS, writer_seed

WRITER = Path(__file__).with_name("batch_writer.py")
# The table keys a writer shares with the stream: it must write the same table.
SHARED_KEYS: tuple[str, ...] = (
    *("jars", "table_path", "table_name", "table_type", "mode", "record_key"),
    *("file_groups", "hudi_options", "spark_conf"),
)


def writer_configs(scenario: Scenario, stream: dict[str, Any], work: Path) -> list[dict[str, Any]]:
    """One config per batch writer; bank mode with none gets an opener of the accounts."""
    writers = scenario.batch_writers
    count = writers.count or (1 if scenario.source.mode == "bank" else 0)
    return [
        {
            **{key: stream[key] for key in SHARED_KEYS if key in stream},
            "master": "local[1]",
            "writer": f"batch_writer:{index}",
            "op": writers.op,
            "every_s": writers.every_s,
            "accounts": scenario.source.accounts,
            "opening_balance": OPENING_BALANCE,
            "open_accounts": index == 0 and scenario.source.mode == "bank",
            "open_only": writers.count == 0,
            "seed": writer_seed(scenario.seed, index),
            "max_attempts": MAX_ATTEMPTS,
            "stop_file": str(work / f"STOP-batch-writer-{index}"),
            "warehouse_dir": str(work / f"spark-warehouse-{index}"),  # not the runner's cwd
        }
        for index in range(count)
    ]
