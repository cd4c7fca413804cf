"""Run by a Spark runtime's own python (stdlib and pyspark only):

    python class_archive_script.py ARCHIVE.tmp

Starts a local session whose JVM writes the classes it loaded to ARCHIVE.tmp when it
exits (-XX:ArchiveClassesAtExit), runs a job and a Parquet write so that the classes a
driver needs are among them, stops the session, lets the JVM exit, and prints one JSON
line: the JVM's class path (a JVM maps the archive only with the same one) and its exit.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from pyspark.sql import SparkSession

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
JVM_EXIT_TIMEOUT_S = 120


def main(archive: str) -> int:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("class-archive")
        .config("spark.driver.extraJavaOptions", f"-XX:ArchiveClassesAtExit={archive} {QUIET}")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.range(1000).selectExpr("sum(id)").collect()
    with tempfile.TemporaryDirectory() as out:
        spark.createDataFrame([(1, "a")], "id long, v string").write.parquet(f"{out}/t")
    context = spark.sparkContext
    class_path = context._jvm.System.getProperty("java.class.path")  # type: ignore[union-attr]
    jvm = context._gateway.proc  # type: ignore[union-attr]
    spark.stop()
    jvm.stdin.close()  # pyspark's JVM exits at the end of its stdin, writing the archive
    jvm.wait(timeout=JVM_EXIT_TIMEOUT_S)
    print(json.dumps({"class_path": class_path, "exit": jvm.returncode}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
