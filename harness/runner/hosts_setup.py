"""A run on `cluster.backend: hosts`: its network of hosts (infra/hosts), made before
anything starts and removed after everything stopped, however the run ends.

The runner itself is a host (`runner`): the run runs in a process born there
(harness/runner/runner_host.py), so the helpers it starts and everything it dials (the
master's UI, the object store, ZooKeeper, a Spark check's JVM) go over the run's bridge,
as the other hosts' traffic does.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from harness.runner.interrupt import signals_held
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario
from harness.scenario.hosts import run_host_names

HOSTS_RECORD = "hosts.json"

if TYPE_CHECKING:
    from infra.hosts import HostNetwork
    from infra.hosts.placement import Placement


@contextlib.contextmanager
def run_hosts(scenario: Scenario, paths: RunPaths) -> Iterator[HostNetwork | None]:
    """The run's network, made and owned by this process (None: not the hosts backend).
    Networks that runs which died left behind are removed first; the network's hosts and
    how long it took to make are recorded for result.json (hosts_environment)."""
    if scenario.cluster.backend != "hosts":
        yield None
        return
    from harness.runner.errors import RunError
    from infra.hosts import HostNetwork, HostsError
    from infra.hosts.reap import reap_networks

    try:
        reap_networks()
        network = HostNetwork(run_host_names(scenario)).up()
    except HostsError as exc:
        raise RunError(f"{scenario.source_file}: cluster.backend: hosts: {exc}") from None
    record = {**network.to_dict(), "up_s": round(network.up_s or 0.0, 3)}
    (paths.control / HOSTS_RECORD).write_text(json.dumps(record))
    try:
        yield network
    finally:
        with signals_held():  # a second Ctrl-C must not leave half the network behind
            network.down()


def hosts_environment(paths: RunPaths) -> dict[str, Any] | None:
    """result.json `environment.hosts`: the network's id, each host's address, the seconds
    it took to make (None: the run had no hosts)."""
    try:
        record = json.loads((paths.control / HOSTS_RECORD).read_text())
    except (OSError, ValueError):
        return None
    keys = ("network_id", "hosts", "up_s")
    return {key: record.get(key) for key in keys}


def placement(hosts: HostNetwork | None, host: str) -> Placement:
    """Where a process of the run runs: its host, or this machine's loopback."""
    from infra.hosts.placement import LOOPBACK

    return LOOPBACK if hosts is None else hosts.placement(host)
