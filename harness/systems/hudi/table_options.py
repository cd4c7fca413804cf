"""The Hudi write options every writer of one run's table shares, stream and batch alike.

Imported by stream_driver.py and batch_writer.py, which the Hudi runtime's python runs as
scripts: standard library only, found beside them (as spark_session.py is); the project's
tests import it as harness.systems.hudi.table_options.

Every writer of a Hudi table must agree on its layout (type, key, key generator, index,
partitioning, how records merge); with more than one writer each also needs OCC and the
same lock provider, which the project side puts in the config's `hudi_options`.
"""

from __future__ import annotations

from typing import Any

TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
# Bank mode: balances and transfer legs live in partitions of their own, so the stream
# (appending legs) and the batch writers (rewriting balances) race only among themselves,
# as a ledger and its accounts table would.
LEDGER_COLUMN = "ledger"
ACCOUNTS, LEGS = "accounts", "legs"
RETAINED_COMMITS = 500


def table_options(cfg: dict[str, Any]) -> dict[str, str]:
    """One table, keyed by `id`; newest `event_id` wins (bank: the latest commit wins,
    since a transfer rewrites a balance whatever its event)."""
    table_type = TABLE_TYPES[cfg["table_type"].lower()]
    key = cfg.get("record_key", "id")
    bank = cfg["mode"] == "bank"
    options = {
        "hoodie.table.name": cfg["table_name"],
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": key,
        "hoodie.datasource.write.partitionpath.field": LEDGER_COLUMN if bank else "",
        "hoodie.datasource.write.keygenerator.class": (
            "org.apache.hudi.keygen.SimpleKeyGenerator"
            if bank
            else "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        ),
        # The scenario's file groups as a fixed bucket count: the same layout the engine has.
        "hoodie.index.type": "BUCKET",
        "hoodie.index.bucket.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": str(cfg.get("file_groups", 4)),
        "hoodie.bucket.index.hash.field": key,
        # The judge reads the table as of every commit (time travel): the cleaner must
        # not delete a commit's files, nor archival its instant, within a run. A run of
        # more commits than this gets `unknown` for those reads, never a guess.
        "hoodie.clean.commits.retained": str(RETAINED_COMMITS),
        "hoodie.keep.min.commits": str(RETAINED_COMMITS + 10),
        "hoodie.keep.max.commits": str(RETAINED_COMMITS + 20),
    }
    if bank:
        options["hoodie.record.merge.mode"] = "COMMIT_TIME_ORDERING"
    else:
        # 1.2's name for what older releases called the precombine field.
        options["hoodie.table.ordering.fields"] = cfg.get("ordering_field", "event_id")
    if table_type == "MERGE_ON_READ":
        options["hoodie.datasource.compaction.async.enable"] = "true"
        options["hoodie.compact.inline.max.delta.commits"] = str(cfg.get("compact_every", 3))
    options.update({k: str(v) for k, v in cfg.get("hudi_options", {}).items()})
    return options
