"""Which fault occurrences already fired: kept in the run's control folder, so a restarted
driver does not crash itself again at the same occurrence."""

from __future__ import annotations

from pathlib import Path


class FiredLog:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, label: str) -> Path:
        return self.folder / label.replace(":", "_").replace("@", "-").replace("#", "-")

    def fired(self, label: str) -> bool:
        return self._path(label).exists()

    def take(self, label: str, count: int) -> bool:
        """Claim one of `count` hits of a counted fault, across every process of the run."""
        return any(self.mark(f"{label}.hit{n}") for n in range(count))

    def all_taken(self, label: str, count: int) -> bool:
        """Every one of `count` hits claimed: take claims them lowest first, so the last
        one marked means every earlier one was too."""
        return self.fired(f"{label}.hit{count - 1}")

    def mark(self, label: str) -> bool:
        """Mark as fired; False if it had fired already (another process won)."""
        try:
            self._path(label).touch(exist_ok=False)
        except FileExistsError:
            return False
        return True


# A coordinator_pause pinned to a seam: the driver marks that it reached the seam, the
# runner pauses it there and marks the resumption just before SIGCONT.
def pause_reached(label: str) -> str:
    return f"{label}.reached"


def pause_resumed(label: str) -> str:
    return f"{label}.resumed"


# A partition pinned to a seam: the driver marks that it reached the seam and waits there,
# the runner cuts the links, heals them after duration_s and marks the heal (it goes on).
def cut_reached(label: str) -> str:
    return f"{label}.cut_reached"


def cut_healed(label: str) -> str:
    return f"{label}.cut_healed"


# Dropped ACKs are followed once an ACK reached the coordinator after all of their hits:
# the moment the subsume contract is put to the test (their batches commit with it).
def ack_followed(label: str) -> str:
    return f"{label}.followed"


# A delayed (or replayed) ACK is handled once the coordinator has answered it: the fault
# has had its effect when each of its `count` hits was handled.
def ack_handled(label: str) -> str:
    return f"{label}.handled"
