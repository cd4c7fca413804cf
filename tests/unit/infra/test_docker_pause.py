"""docker pause on a container that cannot be frozen yet (a task in uninterruptible I/O:
"OCI runtime pause failed: unable to freeze") is tried again; if it never succeeds, the
run gets a ClusterError naming the container (an unknown verdict), never docker's own
exception (which escaped the runner and left no result.json)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import docker.errors
import pytest

from infra.cluster import containers
from infra.cluster.containers import DockerBackend
from infra.cluster.info import ClusterError


class Container:
    short_id = "17234a1621b6"

    def __init__(self, failures: int) -> None:
        self.failures, self.tries = failures, 0

    def pause(self) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise docker.errors.APIError(
                "500 Server Error", explanation="OCI runtime pause failed: unable to freeze"
            )


def backend(container: Container, monkeypatch: pytest.MonkeyPatch) -> tuple[DockerBackend, object]:
    monkeypatch.setattr(containers, "PAUSE_RETRY_S", 0.0)
    worker = SimpleNamespace(state="running")
    cluster = DockerBackend.__new__(DockerBackend)
    cluster._lock = threading.RLock()
    monkeypatch.setattr(cluster, "_worker_container", lambda n: (worker, container), raising=False)
    return cluster, worker


def test_a_pause_that_fails_to_freeze_at_first_is_tried_again(monkeypatch):
    container = Container(failures=3)
    cluster, worker = backend(container, monkeypatch)
    cluster.pause_worker(1)
    assert container.tries == 4 and worker.state == "paused"


def test_a_pause_that_never_freezes_is_a_cluster_error_naming_the_container(monkeypatch):
    container = Container(failures=10**6)
    cluster, worker = backend(container, monkeypatch)
    with pytest.raises(ClusterError, match=r"worker:1: docker could not pause .*17234a1621b6"):
        cluster.pause_worker(1)
    assert container.tries == containers.PAUSE_TRIES and worker.state == "running"
