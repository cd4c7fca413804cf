"""The results store: Parquet files per night, read back with DuckDB SQL."""

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from harness.jobs.store import ResultsStore, flatten

T0 = datetime(2026, 1, 1, 3, 0)


def _metric_rows(night: int, suite: str = "quick", host: str = "h", value: float = 1.0):
    common = {
        "night_id": f"{suite}-{night}",
        "ts": T0 + timedelta(days=night),
        "suite": suite,
        "commit": f"c{night}",
        "host": host,
        "series": "smoke",
        "kind": "scenario",
        "run_id": f"r{night}",
        "verdict": "valid",
    }
    return [
        {**common, "repeat": r, "metric": "freshness_s.p99", "value": value + r} for r in range(2)
    ]


def test_flatten_keeps_numeric_leaves_under_dotted_names() -> None:
    metrics = {
        "rows_committed": 10,
        "throughput_rows_per_s": {"mean": 5.5, "p5": None},
        "stalls": {"count": 1, "runs": [{"start_s": 1}]},
        "faults": [{"dip": 0.5}],
        "flag": True,
    }
    assert flatten(metrics) == {
        "rows_committed": 10.0,
        "throughput_rows_per_s.mean": 5.5,
        "stalls.count": 1.0,
    }


def test_round_trip_with_sql(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    assert store.query("SELECT count(*) AS n FROM metrics") == [{"n": 0}]  # empty store
    for night in range(3):
        store.append("metrics", f"quick-{night}", _metric_rows(night, value=10.0 * night))
    rows = store.query(
        "SELECT night_id, median(value) AS v FROM metrics WHERE metric = ? "
        "GROUP BY night_id ORDER BY night_id",
        ["freshness_s.p99"],
    )
    assert rows == [
        {"night_id": "quick-0", "v": 0.5},
        {"night_id": "quick-1", "v": 10.5},
        {"night_id": "quick-2", "v": 20.5},
    ]
    assert sorted(p.name for p in (tmp_path / "metrics").iterdir()) == [
        "quick-0.parquet",
        "quick-1.parquet",
        "quick-2.parquet",
    ]


def test_a_night_is_written_once(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    store.append("metrics", "quick-0", _metric_rows(0))
    with pytest.raises(FileExistsError, match="quick-0"):
        store.append("metrics", "quick-0", _metric_rows(0))


def test_history_is_per_suite_and_host_before_tonight(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    for night in range(6):
        store.append("metrics", f"quick-{night}", _metric_rows(night, value=float(night)))
    store.append("metrics", "other-0", _metric_rows(0, suite="other", value=99.0))
    store.append("metrics", "quick-h2", _metric_rows(9, host="h2", value=99.0))
    history = store.history("quick", "h", T0 + timedelta(days=5), ["smoke"], window=3)
    # Nights 2, 3, 4 (the 3 latest before night 5), oldest first, median of the repeats.
    assert history == {("smoke", "freshness_s.p99"): [2.5, 3.5, 4.5]}
