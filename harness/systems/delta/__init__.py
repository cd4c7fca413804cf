"""Delta Lake under test: its own Spark Structured Streaming sink on the project's pyspark 4.1
with the Delta jars, fed the same landed events as Hudi (harness/systems/spark_stream/).

Project side: runtime (the jars, fetched with mvn), log_watch (the _delta_log versions on
the runner's monotonic clock), seams (a kill between Delta's commit and Spark's), run,
judge. Runtime side (run as processes of their own): stream_driver (the sink), reader
(Delta's own reader: the snapshot and every version as of, results as Parquet).
"""
