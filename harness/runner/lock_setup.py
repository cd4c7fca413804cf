"""The run's table lock (`engine.lock`): which provider every writer of the table uses,
and for `zookeeper` the real ZooKeeper server the harness starts on loopback for the run
(its data in the run directory) and stops after it. For `service` the endpoint is the file
in which each pipeline driver publishes its lock service's address (harness/pipeline/
engine_sink.py), where the batch writers look for it.

The choice is recorded once, in `control/lock.json` of the run directory: the driver, the
batch writers and result.json `environment.lock` all read it from there, so they agree on
the provider and the server's address.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.locks.registry import LockSpec
from harness.runner.errors import RunError
from harness.runner.hosts_setup import placement
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario

if TYPE_CHECKING:
    from infra.hosts import HostNetwork

LOCK_RECORD = "lock.json"
SERVICE_ENDPOINT = "lock_service.json"  # engine/locks/service_rpc.py write_service_endpoint


@dataclass
class RunLock:
    spec: LockSpec
    server: Any = None  # infra.services.zookeeper.ZooKeeperServer for zookeeper

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def start_run_lock(
    scenario: Scenario, paths: RunPaths, hosts: HostNetwork | None = None
) -> RunLock:
    """The run's lock provider, its service started if it needs one (ZooKeeper on the
    run's zookeeper host, or on loopback); recorded for the run."""
    settings = scenario.engine.lock
    server, endpoint = None, None
    if settings.provider == "service":  # the coordinator publishes its address there
        endpoint = str(paths.control / SERVICE_ENDPOINT)
    if settings.provider == "zookeeper":
        from infra.services.zookeeper import ZooKeeperError, ZooKeeperServer

        where = placement(hosts, "zookeeper")
        server = ZooKeeperServer(paths.root / "zookeeper", placement=where)
        try:
            endpoint = server.start()
        except ZooKeeperError as exc:
            raise RunError(
                f"{scenario.source_file}: engine.lock.provider: zookeeper: {exc}"
            ) from None
    run_lock = RunLock(LockSpec(settings.provider, endpoint, settings.lease_s), server)
    (paths.control / LOCK_RECORD).write_text(json.dumps(lock_environment_of(run_lock.spec)))
    return run_lock


def lock_environment_of(spec: LockSpec) -> dict[str, Any]:
    """result.json `environment.lock`: provider, endpoint (the service's address), lease."""
    return {"provider": spec.provider, "endpoint": spec.endpoint, "lease_s": spec.lease_s}


def run_lock_spec(paths: RunPaths) -> LockSpec:
    """The run's recorded lock (the default provider if none was recorded)."""
    record = lock_environment(paths)
    return LockSpec(**record) if record else LockSpec()


def lock_environment(paths: RunPaths) -> dict[str, Any]:
    try:
        return json.loads((paths.control / LOCK_RECORD).read_text())
    except (OSError, ValueError):
        return {}
