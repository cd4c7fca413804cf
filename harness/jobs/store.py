"""The nightly results store: Parquet files under one folder, queried with DuckDB SQL.

    STORE/metrics/<night_id>.parquet    one row per (run, metric): the long format
    STORE/runs/<night_id>.parquet       one row per run or benchmark session: verdict, env
    STORE/findings/<night_id>.parquet   one row per judged (series, metric): the detector

One file per night and table, written once (temp file + rename): appending never rewrites
history, a crashed night leaves no half file, and any SQL tool reads it, e.g.
`duckdb -c "SELECT * FROM 'STORE/metrics/*.parquet' WHERE metric = 'freshness_s.p99'"`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

_COMMON = [
    ("night_id", pa.string()),
    ("ts", pa.timestamp("us")),  # UTC
    ("suite", pa.string()),
    ("commit", pa.string()),
    ("host", pa.string()),
    ("series", pa.string()),
]

SCHEMAS: dict[str, pa.Schema] = {
    "metrics": pa.schema(
        [
            *_COMMON,
            ("kind", pa.string()),  # scenario | benchmark
            ("run_id", pa.string()),
            ("repeat", pa.int32()),
            ("verdict", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
        ]
    ),
    "runs": pa.schema(
        [
            *_COMMON,
            ("kind", pa.string()),
            ("run_id", pa.string()),
            ("run_dir", pa.string()),
            ("variant", pa.string()),
            ("overrides", pa.list_(pa.string())),
            ("verdict", pa.string()),
            ("error", pa.string()),
            ("environment", pa.string()),  # JSON
        ]
    ),
    "findings": pa.schema(
        [
            *_COMMON,
            ("metric", pa.string()),
            ("direction", pa.string()),
            ("value", pa.float64()),
            ("status", pa.string()),
            ("n_history", pa.int32()),
            ("baseline", pa.float64()),
            ("spread", pa.float64()),
            ("z", pa.float64()),
            ("change", pa.float64()),
        ]
    ),
}


def flatten(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """result.json `metrics` -> {"throughput_rows_per_s.p5": 9991.8, ...}: numeric leaves
    only (lists such as `faults` or `stalls.runs` are per-event evidence, not a trend)."""
    flat: dict[str, float] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[name] = float(value)
    return flat


class ResultsStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def append(self, table: str, night_id: str, rows: Sequence[Mapping[str, Any]]) -> Path:
        schema = SCHEMAS[table]
        folder = self.root / table
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{night_id}.parquet"
        if path.exists():
            raise FileExistsError(f"{path}: night {night_id} is already in the store")
        data = pa.Table.from_pylist([{f: r.get(f) for f in schema.names} for r in rows], schema)
        tmp = folder / f".{night_id}.parquet.tmp"
        pq.write_table(data, tmp)
        os.replace(tmp, path)
        return path

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB with one view per table over its Parquet files."""
        con = duckdb.connect()
        for table, schema in SCHEMAS.items():
            files = sorted(str(p) for p in (self.root / table).glob("*.parquet"))
            if files:
                listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
                con.execute(
                    f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listing}], "
                    "union_by_name = true)"
                )
            else:  # an empty store still answers queries (with no rows)
                con.register(table, schema.empty_table())
        return con

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict]:
        with self.connect() as con:
            cursor = con.execute(sql, params)
            columns = [d[0] for d in cursor.description]
            return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def history(
        self, suite: str, host: str, before: datetime, series: Sequence[str], window: int
    ) -> dict[tuple[str, str], list[float]]:
        """The last `window` valid nights before `before` of every (series, metric) of this
        suite on this host, oldest first; a night's value is the median of its repeats.

        Per suite and host: the same scenario shortened in another suite, or on another
        machine, is another distribution (conbench keys its baseline the same way)."""
        rows = self.query(
            """
            WITH nights AS (
                SELECT series, metric, night_id, max(ts) AS ts, median(value) AS value
                FROM metrics
                WHERE suite = $suite AND host = $host AND verdict = 'valid' AND ts < $before
                  AND list_contains($series, series) AND value IS NOT NULL
                GROUP BY series, metric, night_id
            )
            SELECT series, metric, value FROM nights
            QUALIFY row_number() OVER (PARTITION BY series, metric ORDER BY ts DESC) <= $window
            ORDER BY series, metric, ts
            """,
            {
                "suite": suite,
                "host": host,
                "before": before,
                "series": list(series),
                "window": window,
            },
        )
        out: dict[tuple[str, str], list[float]] = {}
        for row in rows:
            out.setdefault((row["series"], row["metric"]), []).append(row["value"])
        return out

    def trends(
        self, suite: str, host: str, keys: Sequence[tuple[str, str]], nights: int
    ) -> dict[tuple[str, str], list[dict]]:
        """The last `nights` nights of each (series, metric), with each night's finding."""
        rows = self.query(
            """
            WITH wanted AS (
                SELECT k[1] AS series, k[2] AS metric FROM (SELECT unnest($keys) AS k)
            ),
            nights AS (
                SELECT m.series, m.metric, m.night_id, max(m.ts) AS ts,
                       median(m.value) AS value, bool_and(m.verdict = 'valid') AS valid,
                       any_value(m.commit) AS commit
                FROM metrics m JOIN wanted USING (series, metric)
                WHERE m.suite = $suite AND m.host = $host
                GROUP BY m.series, m.metric, m.night_id
            )
            SELECT n.series, n.metric, n.night_id, n.ts, n.value, n.valid, n.commit, f.status
            FROM nights n
            LEFT JOIN findings f USING (night_id, series, metric)
            QUALIFY row_number() OVER (PARTITION BY n.series, n.metric ORDER BY n.ts DESC)
                    <= $nights
            ORDER BY n.series, n.metric, n.ts
            """,
            {"suite": suite, "host": host, "keys": [list(k) for k in keys], "nights": nights},
        )
        out: dict[tuple[str, str], list[dict]] = {k: [] for k in keys}
        for row in rows:
            key = (row.pop("series"), row.pop("metric"))
            row["ts"] = row["ts"].isoformat() if row["ts"] is not None else None
            out[key].append(row)
        return out
