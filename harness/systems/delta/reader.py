"""Delta Lake's own reader: the table's snapshot, and the table as of each version, as
Parquet files for the judge. Run as a process of its own:

    python reader.py CONFIG.json   # {"jars", "table_path", "out_dir", "versions": [...]}

Each read is `spark.read.format("delta")` (with `versionAsOf` for a version), written by
Spark to out_dir/snapshot/ and out_dir/as_of/<version>/; a read that fails is one JSON
line {"event": "read_failed", ...}, and the others still run.
"""

from __future__ import annotations

import sys
from typing import Any

from harness.systems.delta.stream_driver import build_session
from harness.systems.hudi.script_io import emit, java_error, script_main


def run(cfg: dict[str, Any]) -> int:
    spark = build_session({**cfg, "app_name": "delta-reader", "master": "local[2]"})
    reads = [("snapshot", None)] + [(f"as_of/{v}", v) for v in cfg.get("versions", [])]
    for label, version in reads:
        reader = spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", str(version))
        try:
            rows = reader.load(cfg["table_path"])
            rows.write.mode("overwrite").parquet(f"{cfg['out_dir']}/{label}")
            emit("read", label=label)
        except Exception as exc:  # one failed read must not hide the others
            emit("read_failed", label=label, error=java_error(exc))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
