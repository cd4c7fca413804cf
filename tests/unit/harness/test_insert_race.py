"""Batch writers' inserts race in lock-step: same keys, committed only once all have written."""

import threading
import time

import numpy as np

from harness.workload.batch_writers import InsertRace


def test_every_writer_draws_the_same_new_keys_per_commit():
    race = InsertRace(2, rows_per_commit=3)
    assert np.array_equal(race.keys(1), race.keys(1))
    assert set(race.keys(0)).isdisjoint(race.keys(1))
    assert (race.keys(5) < 0).all()


def test_no_writer_commits_before_all_have_written():
    race = InsertRace(2, rows_per_commit=1, wait_s=5)
    passed: list[float] = []

    def writer(delay: float) -> None:
        time.sleep(delay)
        race.written()
        passed.append(time.monotonic())

    started = time.monotonic()
    threads = [threading.Thread(target=writer, args=(d,)) for d in (0.0, 0.3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The prompt writer waited for the slow one.
    assert min(passed) - started >= 0.29


def test_a_lone_writer_commits_after_the_wait_and_the_race_recovers():
    race = InsertRace(2, rows_per_commit=1, wait_s=0.2)
    started = time.monotonic()
    race.written()  # the other writer never comes
    assert 0.19 <= time.monotonic() - started < 2
    # Broken by the timeout, then reset: the next round pairs the writers again.
    both = [threading.Thread(target=race.written) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join(2)
    assert not any(t.is_alive() for t in both)


def test_release_frees_a_waiting_writer():
    race = InsertRace(2, rows_per_commit=1, wait_s=30)
    waiter = threading.Thread(target=race.written)
    waiter.start()
    time.sleep(0.1)
    race.release()
    waiter.join(2)
    assert not waiter.is_alive()
