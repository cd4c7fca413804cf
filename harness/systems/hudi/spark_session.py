"""The Spark session of Hudi's runtime, shared by the runtime-side scripts.

Imported by stream_driver.py and reader.py, which the Hudi runtime's python (pyspark 3.5)
runs as scripts: like them it imports only pyspark and the standard library. They find it
beside them (a script's folder is the first entry of sys.path); the project's tests
import it as harness.systems.hudi.spark_session.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pyspark.sql import SparkSession

KRYO = {
    # What Hudi's quick start asks of every session that reads or writes Hudi.
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}
# Hudi sizes records with JOL, which otherwise tries to attach the Serviceability Agent and
# a Java agent to its own JVM: on Java 17 here both fail, with warnings on stdout (the
# driver's JSON lines). Skipped, JOL sizes objects without them. Spark 3.5.9 itself adds
# the --add-opens Java 17 needs to the driver's and the executors' options
# (SparkContext.supplementJavaModuleOptions): Hudi needs no more.
JAVA_OPTIONS = "-Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true"
JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
# The runtime's class-data archive, beside its interpreter in the venv (made with the
# runtime: harness/systems/spark_stream/class_archive.py ARCHIVE_NAME); -Xshare:auto maps
# it if it fits this JVM, else the JVM starts as it would without.
CLASS_ARCHIVE = os.path.join(sys.prefix, "spark-classes.jsa")
QUIET_ARCHIVE = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # classes it cannot map: noise


def driver_java_options() -> str:
    """Hudi's JVM options, after the archive's where there is one."""
    if os.path.isfile(CLASS_ARCHIVE) and " " not in CLASS_ARCHIVE:
        mapped = f"-XX:SharedArchiveFile={CLASS_ARCHIVE} -Xshare:auto {QUIET_ARCHIVE}"
        return f"{mapped} {JAVA_OPTIONS}"
    return JAVA_OPTIONS


def session_conf(cfg: dict[str, Any]) -> dict[str, str]:
    """Hudi's session settings, then the config's own (JVM options are appended, not lost)."""
    conf = {**KRYO, "spark.driver.extraJavaOptions": driver_java_options()}
    conf["spark.executor.extraJavaOptions"] = JAVA_OPTIONS
    for key, value in cfg.get("spark_conf", {}).items():
        conf[key] = f"{conf[key]} {value}" if key in JAVA_OPTION_KEYS else str(value)
    return conf


def build_session(
    cfg: dict[str, Any], app_name: str, master: str, extra: dict[str, str]
) -> SparkSession:
    """A session on loopback, without UI, running executors on this runtime's python."""
    # The JVM binds loopback only, and says so (without it Spark warns and picks eth0).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = {
        "spark.jars": ",".join(cfg["jars"]),
        # Executors run this runtime's python, not whatever `python` is on PATH.
        "spark.pyspark.python": sys.executable,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **extra,
        **session_conf(cfg),
    }
    builder = SparkSession.builder.appName(app_name).master(cfg.get("master", master))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(cfg.get("log_level", "WARN"))
    return spark
