"""Networks of runs that died (a SIGKILL of the runner): found by their descriptions in
STATE_DIR whose owner is gone, and by namespaces of ours that no description names."""

from __future__ import annotations

import json
import signal

from infra.cluster.procs import signal_pids, wait_gone
from infra.hosts.addresses import NAMESPACE_PREFIX
from infra.hosts.iproute import existing_namespaces, ip, namespace_pids
from infra.hosts.network import STATE_DIR, HostNetwork, process_start


def _owner_alive(state: dict) -> bool:
    owner = state.get("owner_pid")
    if owner is None:
        return True  # made by hand (`instantbench cluster up`): `cluster down` removes it
    return process_start(int(owner)) == state.get("owner_start")


def reap_networks() -> list[str]:
    """Remove every network whose owner died and every namespace of ours no live
    description names; return the namespaces removed.

    The namespaces are listed before the descriptions are read: a network writes its
    description before its first namespace, so every namespace in the list that belongs
    to a live network is named by a description read after it. (Read the other way round,
    a network made in between looked orphaned, and its `ip` commands were killed mid-up.)"""
    ours = existing_namespaces(NAMESPACE_PREFIX)
    removed: list[str] = []
    described: set[str] = set()
    for path in sorted(STATE_DIR.glob("*.json")) if STATE_DIR.exists() else []:
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)  # a description cut off mid-write names nothing
            continue
        network = HostNetwork.attach(state)
        described.add(network.network_id)
        if not _owner_alive(state):
            removed += existing_namespaces(f"{NAMESPACE_PREFIX}{network.network_id}-")
            network.down()
    for ns in ours:
        if ns.split("-")[1] not in described:
            pids = namespace_pids(ns)
            signal_pids(pids, signal.SIGKILL)
            wait_gone(pids, 5.0)
            ip("netns", "del", ns, check=False)
            removed.append(ns)
    return removed
