"""The hosts of a run on `cluster.backend: hosts`, by name (what network faults name)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.scenario.model import Scenario


def run_host_names(scenario: "Scenario") -> list[str]:
    """The hosts a run has: the runner, the driver, the master and each worker, the object
    store when the run starts one, ZooKeeper when the table's lock is one."""
    hosts = ["runner", "driver", "master"]
    hosts += [f"worker:{n}" for n in range(1, scenario.cluster.workers + 1)]
    if scenario.table.storage.kind == "s3" and scenario.table.storage.endpoint == "local":
        hosts.append("s3")
    if scenario.engine.lock.provider == "zookeeper":
        hosts.append("zookeeper")
    return hosts
