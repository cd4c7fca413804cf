"""A table format's own Spark reader (Delta, Iceberg): the table's snapshot as Parquet
for the judge. Run as a process of its own, with the project's python and pyspark 4.1:

    python reader.py CONFIG.json   # {"jars", "format", "session", "table_path", "out_dir"}

`spark.read.format(<format>).load(<table path>)`, written by Spark to out_dir/snapshot/.
"""

from __future__ import annotations

import sys
from typing import Any

from harness.systems.hudi.script_io import script_main
from harness.systems.spark_stream.stream_driver import build_session


def run(cfg: dict[str, Any]) -> int:
    spark = build_session({**cfg, "app_name": f"{cfg['format']}-reader", "master": "local[2]"})
    rows = spark.read.format(cfg["format"]).load(cfg["table_path"])
    rows.write.mode("overwrite").parquet(f"{cfg['out_dir']}/snapshot")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
