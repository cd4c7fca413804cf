"""A tiny real Spark job against a cluster, run as its own process (like the pipeline
driver): spark.range -> mapInArrow -> collect, the driver on 127.0.0.1.

    python spark_job.py MASTER_URL SPARK_CONF_JSON PARTITIONS
prints one JSON line: {"rows": [...], "base": driver's time.time() - time.monotonic()}.
Each row says where its task ran (the worker's loopback address), with which Python, and
the task's wall-clock offset (CLOCK_REALTIME - CLOCK_MONOTONIC, comparable across
processes because monotonic time is not faked).
"""

import json
import sys
import time

from pyspark.sql import SparkSession


def where(batches):
    import os
    import sys
    import time

    import pyarrow as pa

    for batch in batches:
        n = batch.num_rows
        yield pa.RecordBatch.from_pydict(
            {
                "id": batch.column(0),
                "host": [os.environ.get("SPARK_LOCAL_IP", "?")] * n,
                "python": [sys.executable] * n,
                "pid": [os.getpid()] * n,
                "wall_minus_mono": [time.time() - time.monotonic()] * n,
            }
        )


def main() -> None:
    master, conf, partitions = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    builder = (
        SparkSession.builder.appName("instantbench-cluster-test")
        .master(master)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    schema = "id long, host string, python string, pid long, wall_minus_mono double"
    rows = spark.range(partitions, numPartitions=partitions).mapInArrow(where, schema).collect()
    base = time.time() - time.monotonic()
    spark.stop()
    print(json.dumps({"rows": [r.asDict() for r in rows], "base": base}))


if __name__ == "__main__":
    main()
