"""Hudi's multi-writer options for the run's lock (harness/runner/lock_setup.py).

With more than one writer every writer of a Hudi table runs optimistic concurrency control
with the same lock provider: Hudi's own providers, not the engine's. `zookeeper` is Hudi's
ZookeeperBasedLockProvider on the real ZooKeeper the harness starts for the run; `file` is
its FileSystemBasedLockProvider (a lock file in the table's storage, the provider Hudi
offers for a local file system). Hudi's storage-based provider needs an object store, and
the engine's lock service has no Hudi client: `validate` refuses those.
"""

from __future__ import annotations

import math

from engine.locks.registry import LockSpec

LOCK_PROVIDERS = {
    "zookeeper": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
    "file": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
}
ZOOKEEPER_BASE_PATH = "/instantbench-hudi"


def occ_options(spec: LockSpec, table_name: str) -> dict[str, str]:
    """OCC and the lock provider, the same for the stream and every batch writer."""
    if spec.provider not in LOCK_PROVIDERS:
        raise ValueError(f"Hudi has no lock provider for {spec.provider!r}")
    options = {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        # A failed writer's files are cleaned lazily: another writer may still be running.
        "hoodie.cleaner.policy.failed.writes": "LAZY",
        "hoodie.write.lock.provider": LOCK_PROVIDERS[spec.provider],
    }
    if spec.provider == "zookeeper":
        # The connect string carries the port: Hudi hands the url to Curator as it is.
        options.update(
            {
                "hoodie.write.lock.zookeeper.url": str(spec.endpoint),
                "hoodie.write.lock.zookeeper.base_path": ZOOKEEPER_BASE_PATH,
                "hoodie.write.lock.zookeeper.lock_key": table_name,
                # The lease: a holder whose session expires loses the lock.
                "hoodie.write.lock.zookeeper.session_timeout_ms": str(int(spec.lease_s * 1000)),
            }
        )
    else:
        # The file lock expires by its age in whole minutes (0 would be never).
        options["hoodie.write.lock.filesystem.expire"] = str(max(1, math.ceil(spec.lease_s / 60)))
    return options
