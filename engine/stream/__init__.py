"""Streaming write path: coordinator (driver), writer tasks (executors), WriteMeta, state,
transports. See engine/README.md, section "Streaming protocol". The package imports none
of its modules, so a part (the RPC client a lock provider uses) loads without the rest."""
