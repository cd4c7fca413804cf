"""The table: create/open, write, commit (OCC, pk check), rollback, compaction, reads."""

from engine.table.stats import WriteStat
from engine.table.table import Table
from engine.table.transaction import Transaction

__all__ = ["Table", "Transaction", "WriteStat"]
