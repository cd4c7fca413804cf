"""What every system whose writer is a Spark Structured Streaming sink shares (Hudi, Delta):
the landed event feed (landing), what Spark's checkpoint says was committed
(checkpoint_truth), the driver's process (driver_process), the Spark runtime's jars and
venvs (runtime_cache) and the exactly-once judgement built on them (exactly_once).
"""
