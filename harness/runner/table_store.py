"""Where a run's table lives (`table.storage`): a local folder, or an S3-compatible store.

`endpoint: local` starts moto's S3 server on loopback for the run (infra/services) and
creates the bucket; `endpoint: URL` uses an existing store, credentials from the AWS
environment variables. The table is `<bucket>/<run id>`. After the pipeline stopped,
`keep_copy()` copies the final table into the run directory (`<run>/table`), where the
checks read it and from where it can be reopened once the server is gone.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from harness.runner.hosts_setup import placement
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario

if TYPE_CHECKING:
    from infra.hosts import HostNetwork
    from infra.services.s3_server import S3Server

# The store's credentials reach every process through its environment: the driver and
# the standalone workers (and so their executors) inherit the runner's; containers get them
# as spark.executorEnv.* (which the driver's config file then holds).
AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION")


class TableStore:
    def __init__(
        self, scenario: Scenario, paths: RunPaths, hosts: HostNetwork | None = None
    ) -> None:
        """hosts: the run's network (a local S3 server runs on its s3 host)."""
        self.spec, self.paths, self.hosts = scenario.table.storage, paths, hosts
        self.backend = scenario.cluster.backend
        self.location = str(paths.table)  # what every process opens the table by
        self._server: S3Server | None = None
        self._saved_env: dict[str, str | None] = {}

    @property
    def is_s3(self) -> bool:
        return self.spec.kind == "s3"

    def start(self) -> str:
        """Start the store (a local S3 server) if the run needs one; the table's location."""
        if not self.is_s3:
            return self.location
        endpoint, bucket = self.spec.endpoint, self.spec.bucket
        assert bucket is not None  # kind s3 needs one (the model refuses it without)
        if endpoint == "local":
            from infra.services.s3_server import CREDENTIALS, S3Server

            # moto takes any credentials; the run presents its own (never a user's real
            # ones, which the containers' settings would otherwise carry), until stop().
            self._saved_env = {k: os.environ.get(k) for k in AWS_ENV}
            for key in AWS_ENV:
                os.environ.pop(key, None)
            os.environ.update(CREDENTIALS)
            log = self.paths.logs / "s3-server.log"
            server = S3Server(log, placement=placement(self.hosts, "s3"))
            self._server = server
            endpoint = server.start()
            server.create_bucket(bucket)
        self.location = f"s3://{bucket}/{self.paths.root.name}?endpoint={endpoint}"
        return self.location

    def executor_env(self) -> dict[str, str]:
        """Spark settings that give executors the store's credentials: always for the local
        store (its credentials are the run's own), for another store only in containers
        (everything else inherits them)."""
        if not self.is_s3 or (self.spec.endpoint != "local" and self.backend != "docker"):
            return {}
        return {f"spark.executorEnv.{k}": os.environ[k] for k in AWS_ENV if k in os.environ}

    def keep_copy(self) -> None:
        """Copy the final table into `<run>/table` (a local table stays where it is)."""
        if not self.is_s3:
            return
        from engine.storage import Storage

        Storage(self.location).copy_to_local(str(self.paths.table))

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env = {}


def storage_environment(scenario: Scenario) -> dict[str, Any]:
    """result.json `environment.storage`: {kind, endpoint} (and the bucket on S3)."""
    spec = scenario.table.storage
    if spec.kind != "s3":
        return {"kind": "local", "endpoint": None}
    return {"kind": "s3", "endpoint": spec.endpoint, "bucket": spec.bucket}
