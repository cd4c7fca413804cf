"""What a Hudi run shows while it lasts."""

from harness.systems.hudi.run import _pending
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
