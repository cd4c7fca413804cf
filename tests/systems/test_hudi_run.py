"""What a Hudi run shows while it lasts."""

from pathlib import Path
from types import SimpleNamespace

from harness.history import HistoryWriter, read_series
from harness.runner.rundir import new_run_paths
from harness.scenario import validate_scenario
from harness.systems.hudi.run import _pending, _sample
from harness.systems.hudi.run_state import HudiRun
from harness.systems.hudi.timeline_watch import SeenInstant


def test_the_progress_bar_counts_instants_not_completed_yet() -> None:
    entries = [
        SeenInstant(0.0, 0, "001.commit.requested", "requested", "commit", "001", None),
        SeenInstant(0.1, 1, "001.inflight", "inflight", "commit", "001", None),
        SeenInstant(0.2, 2, "001_002.commit", "completed", "commit", "001", "002"),
        SeenInstant(0.3, 3, "003.commit.requested", "requested", "commit", "003", None),
    ]

    class Watch:
        def entries(self) -> list[SeenInstant]:
            return entries

    assert _pending(Watch()) == 1  # type: ignore[arg-type]


def test_each_second_records_the_backlog_capacity_judges(tmp_path: Path) -> None:
    """Rows landed and rows committed per second (their difference: the backlog whose
    slope `capacity` judges, harness/metrics/lag.py) and the instants still pending."""
    scenario = validate_scenario({"name": "h", "system": {"kind": "hudi"}})
    paths = new_run_paths(scenario, tmp_path, None)
    run = HudiRun(scenario, paths, None, HistoryWriter(paths.history, "runner"))  # type: ignore[arg-type]
    run.drivers = [SimpleNamespace(events=lambda kind: [{"rows": 300}, {"rows": 200}])]  # type: ignore[list-item]
    lander = SimpleNamespace(offsets_landed=lambda: 900)
    watch = SimpleNamespace(entries=lambda: [])
    _sample(run, lander, watch, 1.0)  # type: ignore[arg-type]
    (row,) = read_series(paths.history)
    assert (row["source_offset"], row["committed_offset"], row["pending_instants"]) == (900, 500, 0)
