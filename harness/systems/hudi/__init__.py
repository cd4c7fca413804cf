"""Apache Hudi under test: its own Spark Structured Streaming sink on a Spark runtime of its
own (pyspark 3.5 + the Hudi bundle), fed the same landed events as every Spark sink
(harness/systems/spark_stream/: the feed, Spark's checkpoint, the driver's process).

Project side (Python 3.11, no Spark): runtime (venv + jars, cached), stream_config (the
driver's config), timeline_watch (the commit log on the runner's monotonic clock), seams
(a kill between Hudi's commit and Spark's), read_table.
Runtime side (run by the runtime's python, importing only pyspark and the standard
library): stream_driver (the sink), reader (Hudi's own reader, results as Parquet).
"""
