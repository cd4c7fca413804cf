"""The Spark side of a run: the event source, the executor write tasks and the driver."""
