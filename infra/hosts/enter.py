"""Moving the calling thread into a host's namespace and back.

A thread's network namespace is its own (setns(2) changes only the caller); the threads
and processes it starts afterwards inherit it, the threads it did not start do not. A hosts
run's owner starts its runner process this way, born on the runner host with every thread
it will make (harness/runner/runner_host.py). Python 3.11 has no os.setns: libc's, through
ctypes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator

from infra.hosts.addresses import HostsError
from infra.hosts.iproute import NETNS_DIR

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int, what: str) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise HostsError(f"cannot enter {what}: {os.strerror(error)} (needs root)")


def current_namespace() -> str:
    """The calling thread's network namespace, as the kernel names it (net:[inode])."""
    return os.readlink("/proc/thread-self/ns/net")


@contextlib.contextmanager
def inside(namespace: str) -> Iterator[None]:
    """Run the block's network calls (and what it starts) inside `namespace`; the thread
    returns to where it was afterwards, also on an exception."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        try:
            target = os.open(NETNS_DIR / namespace, os.O_RDONLY)
        except FileNotFoundError:
            raise HostsError(f"no network namespace {namespace!r}") from None
        try:
            _setns(target, namespace)
        finally:
            os.close(target)
        try:
            yield
        finally:
            _setns(home, "the thread's own namespace")
    finally:
        os.close(home)
