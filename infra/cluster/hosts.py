"""Spark standalone on hosts of its own: the master and each worker are processes in a
network namespace each (infra/hosts), reached over the run's bridge only. A run passes its
network (it also holds the runner, the driver and the services); by hand (`instantbench
cluster up --backend hosts`) the cluster makes one of its own and removes it on down()."""

from __future__ import annotations

from typing import Any

from infra.cluster.base import ClusterBackend
from infra.cluster.info import ClusterError, ClusterInfo
from infra.cluster.master_ui import master_json
from infra.cluster.standalone import StandaloneBackend
from infra.hosts import HostNetwork, HostsError, host_address
from infra.hosts.enter import inside


def cluster_hosts(workers: int) -> list[str]:
    return ["master", *(f"worker:{n}" for n in range(1, workers + 1))]


class HostsBackend(StandaloneBackend):
    name = "hosts"

    def __init__(self, *args: Any, network: HostNetwork | None = None, **kwargs: Any) -> None:
        kwargs.pop("master_host", None)  # the network's layout says where the master is
        super().__init__(*args, master_host=host_address("master"), **kwargs)
        self.network = network
        self._owns_network = network is None

    def worker_host(self, n: int) -> str:
        return host_address(f"worker:{n}")

    def _preflight(self) -> None:
        super()._preflight()
        wanted = cluster_hosts(self.workers)
        if self.network is None:
            from infra.hosts.reap import reap_networks

            reap_networks()
            self.network = HostNetwork(wanted, owned=self.owned).up()
        missing = [h for h in wanted if h not in self.network.hosts]
        if missing:
            raise ClusterError(f"the hosts network has no {', '.join(missing)}")

    def _check_ports(self) -> None:
        """Nothing listens in a new network's namespaces: there is nothing to check."""

    def _wait_ports_free(self, workers: int) -> None:
        """The next cluster gets a network of its own: nothing to wait for."""

    def _require_network(self) -> HostNetwork:
        if self.network is None:
            raise ClusterError("the hosts cluster has no network: it is not up")
        return self.network

    def _launcher(self, key: str) -> list[str]:
        host = "master" if key == "master" else key.replace("worker-", "worker:")
        return self._require_network().launcher(host)

    def _master_state(self) -> dict[str, Any] | None:
        """Read from inside the master's own host: the caller may be on no host at all."""
        try:
            with inside(self._require_network().namespace("master")):
                return master_json(self.web_url)
        except HostsError:  # the network is gone: the master does not answer
            return None

    def _new_info(self) -> ClusterInfo:
        info = super()._new_info()
        info.network = self._require_network().to_dict()
        return info

    def down(self) -> None:
        with self._lock:
            super().down()
            if self._owns_network and self.network is not None:
                self.network.down()
                self.network = None

    def status(self) -> dict[str, Any]:
        network = self.network.status() if self.network is not None else None
        return {**super().status(), "network": network}

    @classmethod
    def attach(cls, info: ClusterInfo, **kwargs: Any) -> ClusterBackend:
        backend = super().attach(info, **kwargs)
        assert isinstance(backend, HostsBackend)
        if info.network is not None:
            backend.network = HostNetwork.attach(info.network)
            backend._owns_network = True  # by hand: its network is the cluster's own
        return backend
