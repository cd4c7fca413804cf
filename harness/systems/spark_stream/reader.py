"""A table format's own Spark reader (Delta, Iceberg): the table's snapshot, and the table
as of each commit asked for, as Parquet for the judge. Run as a process of its own, with
the project's python and pyspark 4.1:

    python reader.py CONFIG.json
    # {"jars", "format", "session", "table_sql", "out_dir", "as_of": {label: version}}

The table by its name in SQL (`VERSION AS OF` for an as-of read: Spark's own time travel,
which both formats implement), written by Spark to out_dir/snapshot/ and
out_dir/as_of/<label>/. A read that fails is named in out_dir/failed.json with its Java
exception, and the others still run.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from harness.systems.hudi.script_io import java_error, script_main
from harness.systems.spark_stream.stream_driver import build_session


def run(cfg: dict[str, Any]) -> int:
    spark = build_session({**cfg, "app_name": f"{cfg['format']}-reader", "master": "local[2]"})
    table = cfg["table_sql"]
    reads = {
        f"as_of/{k}": f"SELECT * FROM {table} VERSION AS OF {v}" for k, v in cfg["as_of"].items()
    }
    reads = {"snapshot": f"SELECT * FROM {table}", **reads}
    failed: dict[str, str] = {}
    for label, query in reads.items():
        try:
            spark.sql(query).write.mode("overwrite").parquet(f"{cfg['out_dir']}/{label}")
        except Exception as exc:  # one failed read must not hide the others
            failed[label] = java_error(exc)
    with open(f"{cfg['out_dir']}/failed.json", "w", encoding="utf-8") as handle:
        json.dump(failed, handle)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
