"""Apache Iceberg under test: its own Spark Structured Streaming sink on the project's
pyspark 4.1 with the Iceberg runtime jar, run by the shared Spark-sink runner
(harness/systems/spark_stream/sink_run.py). Here: capabilities, runtime (the jar),
metadata_log (its commit log: metadata versions and snapshots), system (the SinkSystem).
"""
