"""Stopping and continuing a process of the run with everything it started (SIGSTOP,
SIGCONT): a pyspark application is its python, its JVM and the JVM's python workers, which
pyspark puts in process groups of their own, so a group signal would miss them."""

from __future__ import annotations

import contextlib
import signal
import time

import psutil

# A stopped process, or one already gone (the launcher script's zombie).
HALTED = (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def signal_tree(leader: int, signum: signal.Signals) -> list[psutil.Process]:
    """Signal a process and every descendant; the ones signalled (to continue them)."""
    try:
        root = psutil.Process(leader)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []
    return signal_tree_of(tree, signum)


def signal_tree_of(tree: list[psutil.Process], signum: signal.Signals) -> list[psutil.Process]:
    signalled = []
    for process in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signum)
            signalled.append(process)
    return signalled


def halted(tree: list[psutil.Process], attempts: int = 100) -> bool:
    """Every process shows state T (SIGSTOP delivered) or is gone, within ~1 s."""
    for _ in range(attempts):
        states = []
        for process in tree:
            try:
                states.append(process.status())
            except psutil.NoSuchProcess:
                states.append(psutil.STATUS_DEAD)
        if tree and all(s in HALTED for s in states):
            return True
        time.sleep(0.01)
    return False
