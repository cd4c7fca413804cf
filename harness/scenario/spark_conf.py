"""`cluster.spark_conf`: Spark settings a scenario may pass to the pipeline driver's session.

Most settings are the user's business (memory, shuffle partitions, the UI's port). A few
carry the harness's own guarantees; changing them would make a run measure or check
something else, so they are refused with the reason.
"""

from typing import Any

# Setting -> why the harness owns it. harness/pipeline/session.py and
# harness/runner/driver_config.py set most of these (tests/unit/harness/test_spark_conf.py).
RESERVED = {
    "spark.master": "cluster.backend picks the master",
    "spark.submit.deployMode": "the driver must run as the runner's child process",
    "spark.sql.streaming.checkpointLocation": "the exactly-once evidence is the run's own "
    "checkpoint location (spark-checkpoint/ in the run directory)",
    "spark.pyspark.python": "executors must run the driver's Python",
    "spark.pyspark.driver.python": "executors must run the driver's Python",
    "spark.driver.host": "the harness binds and dials loopback only",
    "spark.driver.bindAddress": "the harness binds and dials loopback only",
    "spark.task.maxFailures": "a writer_crash relies on Spark retrying the task",
    "spark.sql.streaming.noDataMicroBatches.enabled": "one micro-batch is one checkpoint "
    "interval with data",
    "spark.sql.streaming.minBatchesToRetain": "the exactly-once check reads every entry of "
    "the offset and commit logs",
    "spark.eventLog.dir": "the event log is kept in the run directory (spark-events/)",
}


def _as_text(key: str, value: Any) -> str:
    # YAML reads `true` and `4` as bool and int; Spark wants `true` and `4`.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise ValueError(f"{key!r} must be a string, number or boolean, got {value!r}")


def check_spark_conf(conf: Any) -> Any:
    """Before validation: refuse reserved keys, turn scalar values into Spark's strings."""
    if not isinstance(conf, dict):
        return conf  # pydantic reports the wrong type
    for key in conf:
        if key in RESERVED:
            raise ValueError(f"{key!r} is set by the harness ({RESERVED[key]}); not allowed")
    return {key: _as_text(key, value) for key, value in conf.items()}
