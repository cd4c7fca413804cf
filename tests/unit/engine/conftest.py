from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from engine.config import TableConfig
from engine.table import Table
from tests.unit.engine.s3_helpers import s3_location, s3_server, storage_root  # noqa: F401

_ids = itertools.count()


@pytest.fixture
def table_path(tmp_path) -> str:
    return str(tmp_path / "table")


@pytest.fixture
def make_table(table_path) -> Callable[..., Table]:
    """Create the table on first call; later calls open more writers on the same path."""
    opened: list[Table] = []

    def make(config: TableConfig | None = None, **kwargs) -> Table:
        kwargs.setdefault("max_skew_ms", 0)
        kwargs.setdefault("heartbeat_interval_s", 0)
        kwargs.setdefault("heartbeat_expiry_s", 30)
        kwargs.setdefault("writer_id", f"w{next(_ids)}")
        if not opened:
            table = Table.create(table_path, config or TableConfig(), **kwargs)
        else:
            table = Table.open(table_path, **kwargs)
        opened.append(table)
        return table

    yield make
    for t in opened:
        t.close()
