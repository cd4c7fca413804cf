"""A run's network of hosts: one namespace per host, each with one link (a veth pair) to a
bridge in the run's hub namespace. The hub has no address and no other link, and no host
has a route beyond the subnet, so nothing in it can reach, or be reached from, anything
outside (DESIGN.md, practical notes).

The network's description (its id, hosts, owner) is written to STATE_DIR before any
namespace exists and removed after the last is gone: a run that finds a description whose
owner died removes what it names (infra/hosts/reap.py).
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infra.cluster.procs import signal_pids, wait_gone
from infra.hosts.addresses import (
    PREFIX_LENGTH,
    HostsError,
    host_address,
    hub_name,
    namespace_name,
    network_prefix,
    port_name,
)
from infra.hosts.iproute import exec_prefix, existing_namespaces, ip, namespace_pids
from infra.hosts.placement import Placement

STATE_DIR = Path("/run/instantbench/hosts")
BRIDGE = "br0"
LINK = "eth0"  # each host's end of its link


def process_start(pid: int) -> float | None:
    """When a process started (so a reused pid is not taken for the owner); None if gone."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return None


class HostNetwork:
    """Hosts by name (runner, driver, master, worker:N, s3, zookeeper, batch_writer:N).

    A context manager (up on enter, down on exit), or up()/down(); down() is idempotent and
    leaves no namespace, link or process of this network behind."""

    def __init__(
        self, hosts: Sequence[str], *, network_id: str | None = None, owned: bool = True
    ) -> None:
        for host in hosts:
            host_address(host)  # HostsError naming the host and the allowed names
        if len(set(hosts)) != len(hosts):
            raise HostsError(f"a host appears twice in {list(hosts)}")
        self.hosts = list(hosts)
        self.network_id = network_id or uuid.uuid4().hex[:6]
        self.owned = owned  # a run's (removed when it dies) or made by hand (the CLI)
        self.up_s: float | None = None  # how long up() took

    # --- where things are ----------------------------------------------------------
    def address(self, host: str) -> str:
        self._require(host)
        return host_address(host)

    def namespace(self, host: str) -> str:
        self._require(host)
        return namespace_name(self.network_id, host)

    def launcher(self, host: str) -> list[str]:
        """The command prefix that starts a program on `host`."""
        return exec_prefix(self.namespace(host))

    def launcher_of_hub(self) -> list[str]:
        """The command prefix that runs a program in the hub (where the links meet)."""
        return exec_prefix(self.hub)

    def placement(self, host: str) -> Placement:
        return Placement(self.address(host), self.namespace(host))

    @property
    def hub(self) -> str:
        return hub_name(self.network_id)

    @property
    def state_path(self) -> Path:
        return STATE_DIR / f"{self.network_id}.json"

    def _require(self, host: str) -> None:
        if host not in self.hosts:
            raise HostsError(f"no host {host!r} in this network; it has {', '.join(self.hosts)}")

    # --- making and removing ---------------------------------------------------------
    def up(self) -> HostNetwork:
        started = time.monotonic()
        self._write_state()
        try:
            ip("netns", "add", self.hub)
            ip("link", "add", BRIDGE, "type", "bridge", namespace=self.hub)
            ip("link", "set", BRIDGE, "up", namespace=self.hub)
            for host in self.hosts:
                self._add_host(host)
        except BaseException:
            self.down()
            raise
        self.up_s = time.monotonic() - started
        return self

    def _add_host(self, host: str) -> None:
        ns, port = self.namespace(host), port_name(host)
        ip("netns", "add", ns)
        peer = ("peer", "name", LINK, "netns", ns)
        ip("link", "add", port, "type", "veth", *peer, namespace=self.hub)
        ip("link", "set", port, "master", BRIDGE, "up", namespace=self.hub)
        ip("addr", "add", f"{host_address(host)}/{PREFIX_LENGTH}", "dev", LINK, namespace=ns)
        ip("link", "set", LINK, "up", namespace=ns)
        ip("link", "set", "lo", "up", namespace=ns)  # a host's own services on 127.0.0.1

    def down(self) -> None:
        """Kill what still runs on the hosts, remove their namespaces, then the hub."""
        namespaces = existing_namespaces(network_prefix(self.network_id))
        pids = {p for ns in namespaces for p in namespace_pids(ns)} - {os.getpid()}
        signal_pids(sorted(pids), signal.SIGKILL)
        wait_gone(sorted(pids), 5.0)
        for ns in namespaces:  # a host's veth goes with its namespace
            ip("netns", "del", ns, check=False)
        left = existing_namespaces(network_prefix(self.network_id))
        if left:
            raise HostsError(f"network {self.network_id}: could not remove {', '.join(left)}")
        self.state_path.unlink(missing_ok=True)

    def __enter__(self) -> HostNetwork:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    # --- its description -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        owner = os.getpid() if self.owned else None
        return {
            "network_id": self.network_id,
            "hosts": {h: host_address(h) for h in self.hosts},
            "owner_pid": owner,
            "owner_start": process_start(owner) if owner else None,
        }

    @classmethod
    def attach(cls, state: dict[str, Any]) -> HostNetwork:
        """The network a description (a state file, a cluster's info) names."""
        network = cls(list(state["hosts"]), network_id=state["network_id"], owned=False)
        network.owned = state.get("owner_pid") is not None
        return network

    def _write_state(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2))
        os.replace(tmp, self.state_path)

    def status(self) -> dict[str, Any]:
        """Each host's address, namespace, whether it exists, and its processes."""
        present = set(existing_namespaces(network_prefix(self.network_id)))
        hosts = {}
        for host in self.hosts:
            ns = self.namespace(host)
            there = ns in present
            hosts[host] = {
                "address": host_address(host),
                "namespace": ns,
                "exists": there,
                "processes": namespace_pids(ns) if there else [],
            }
        return {"network_id": self.network_id, "hub": self.hub in present, "hosts": hosts}
