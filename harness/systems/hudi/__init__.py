"""Apache Hudi under test: its own Spark Structured Streaming sink on a Spark runtime of its
own (pyspark 3.5 + the Hudi bundle), fed the same events as the engine.

Project side (Python 3.11, no Spark): runtime (venv + jars, cached), landing (the event
feed as Parquet files), driver_process (starts, stops, kills the driver's process group),
timeline_watch (the commit log on the runner's monotonic clock), checkpoint_truth (what
Spark durably committed), seams (a kill between Hudi's commit and Spark's), read_table.
Runtime side (run by the runtime's python, importing only pyspark and the standard
library): stream_driver (the sink), reader (Hudi's own reader, results as Parquet).
"""
