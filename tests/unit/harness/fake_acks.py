"""The two ends of a held ACK, faked so a test orders them by hand: the timer that holds
it and the coordinator that answers it."""

from concurrent.futures import Future


class FakeTimer:
    """A threading.Timer the test fires by hand."""

    made: list["FakeTimer"] = []

    def __init__(self, interval: float, fn) -> None:
        self.interval, self.fn = interval, fn
        self.started = self.cancelled = False
        FakeTimer.made.append(self)

    def start(self) -> None:
        self.started = True

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        self.fn()


class FakeCoordinator:
    def __init__(self) -> None:
        self.acks: list[tuple[int, Future]] = []

    def notify(self, checkpoint_id: int) -> Future:
        done: Future = Future()
        self.acks.append((checkpoint_id, done))
        return done
