"""Clocks, instant-time formatting and the TrueTime generator."""

from __future__ import annotations

import threading

import pytest

from engine.clock import AdjustableClock, ManualClock, SystemClock, format_instant, parse_instant
from engine.errors import InvalidInstantTimeError
from engine.locks.base import InProcessLock
from engine.truetime import InstantTimeGenerator, LastGenerated

T0 = 1_700_000_000_000


def test_format_and_parse_round_trip():
    assert format_instant(0) == "19700101000000000"
    assert format_instant(T0 + 123) == "20231114221320123"
    assert parse_instant("20231114221320123") == T0 + 123
    for ms in (T0, T0 + 999, 253402300799999):
        assert parse_instant(format_instant(ms)) == ms


@pytest.mark.parametrize(
    "bad", ["", "2023111422132012", "2023111422132012x", "20231399221320123", 5]
)
def test_parse_rejects_malformed(bad):
    with pytest.raises(InvalidInstantTimeError):
        parse_instant(bad)


def test_format_rejects_out_of_range():
    with pytest.raises(InvalidInstantTimeError):
        format_instant(10**16)


def test_adjustable_clock_offset_drift_jump_reset():
    base = ManualClock(T0)
    clock = AdjustableClock(base)
    assert clock.now_ms() == T0
    clock.set_offset_ms(-500)
    assert clock.now_ms() == T0 - 500 and clock.skew_ms == -500
    clock.jump_ms(100)
    assert clock.now_ms() == T0 - 400
    clock.set_drift_ppm(1000)  # 1 ms per second, from now on
    assert clock.now_ms() == T0 - 400
    base.advance(10_000)
    assert clock.now_ms() == T0 + 10_000 - 400 + 10
    clock.set_drift_ppm(0)  # drift so far is kept
    base.advance(10_000)
    assert clock.now_ms() == T0 + 20_000 - 400 + 10
    clock.reset()
    assert clock.now_ms() == T0 + 20_000


def test_adjustable_clock_is_thread_safe():
    clock = AdjustableClock(SystemClock())

    def adjust():
        for i in range(2000):
            clock.set_offset_ms(i % 7)
            clock.jump_ms(0)

    threads = [threading.Thread(target=adjust) for _ in range(4)]
    for th in threads:
        th.start()
    readings = [clock.now_ms() for _ in range(2000)]
    for th in threads:
        th.join()
    assert all(r > 0 for r in readings)


class _Store:
    def __init__(self):
        self.value = None

    def load(self):
        return self.value

    def save(self, t):
        self.value = t


def _gen(clock, store=None, strict=True, floor=None, skew=0, wait=False, key="tt"):
    return InstantTimeGenerator(
        clock,
        InProcessLock(key),
        skew,
        strict_monotonic=strict,
        wait=wait,
        floor=floor,
        store=store,
    )


def test_strictly_increasing_when_skew_equals_bound_across_processes():
    """Two 'processes' (own generators, shared store) whose clocks differ by exactly the bound."""
    base = ManualClock(T0)
    store = _Store()
    fast = _gen(base, store)
    slow = _gen(AdjustableClock(base), store)
    slow.clock.set_offset_ms(-200)
    seen = []
    for _ in range(20):
        seen.append(fast.generate())
        base.advance(200)  # the TrueTime wait: exactly the bound
        seen.append(slow.generate())
    assert seen == sorted(seen) and len(set(seen)) == len(seen)


def test_non_strict_with_skew_beyond_bound_goes_below_existing_instant():
    base = ManualClock(T0)
    existing = _gen(base, strict=False).generate()
    skewed = AdjustableClock(base)
    skewed.set_offset_ms(-500)  # beyond a 200 ms bound
    floor = lambda: existing  # noqa: E731 - the max instant time on the timeline
    assert _gen(skewed, strict=False, floor=floor, skew=200).generate() < existing
    assert _gen(skewed, strict=True, floor=floor, skew=200).generate() > existing


def test_last_generated_is_shared_through_the_store():
    clock = ManualClock(T0)
    store = _Store()
    a = _gen(clock, store).generate()
    b = _gen(clock, store).generate()  # a fresh generator, same frozen clock
    assert b > a and store.value == LastGenerated(b, 2)


def test_wait_sleeps_the_skew_bound_and_reports_timing():
    gen = _gen(SystemClock(), skew=30, wait=True)
    g = gen.generate_stamped()
    assert g.timing.truetime_sleep_ms >= 29 and g.timing.lock_wait_ms >= 0
    assert gen.last_timing == g.timing and len(g.time) == 17 and g.seq is None  # no store
    timing2 = _gen(SystemClock(), skew=30, wait=False).generate_stamped().timing
    assert timing2.truetime_sleep_ms < 29


def test_concurrent_generation_is_unique():
    gen = _gen(SystemClock(), _Store())
    out: list[str] = []
    lock = threading.Lock()

    def run():
        for _ in range(200):
            t = gen.generate()
            with lock:
                out.append(t)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(set(out)) == 800
