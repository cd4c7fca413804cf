"""The run's own test hosts: a network namespace per process role (runner, driver, Spark
master, each worker, the object store, ZooKeeper), linked by a bridge in a namespace of
the run's own, with no route, NAT or link to anything outside them (DESIGN.md, practical
notes). Network faults act on these links (tc netem, blackhole routes) and nowhere else.

    from infra.hosts import HostNetwork
    with HostNetwork(["runner", "master", "worker:1"]) as net:
        net.address("worker:1")      # 10.77.0.11
        net.launcher("worker:1")     # ["ip", "netns", "exec", "ib-...-worker1"]

Nothing here imports pyspark or the harness.
"""

from infra.hosts.addresses import HostsError, host_address
from infra.hosts.network import HostNetwork

__all__ = ["HostNetwork", "HostsError", "host_address"]
