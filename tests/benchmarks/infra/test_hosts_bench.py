"""What a run's hosts cost before and after Spark: making the network of a run with every
host (runner, driver, master, two workers, the object store, ZooKeeper) and removing it.

    python -m pytest tests/benchmarks/infra --benchmark-enable
"""

from __future__ import annotations

from infra.hosts import HostNetwork
from infra.hosts.iproute import existing_namespaces

HOSTS = ["runner", "driver", "master", "worker:1", "worker:2", "s3", "zookeeper"]


def test_a_run_s_network_up_and_down(benchmark):
    def up_and_down() -> str:
        network = HostNetwork(HOSTS).up()
        network.down()
        return network.network_id

    network_id = benchmark(up_and_down)
    assert existing_namespaces(f"ib-{network_id}-") == []
