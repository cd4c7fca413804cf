"""An S3-compatible object store on loopback for one run: moto's server mode.

moto answers the S3 API including conditional writes (`If-None-Match: *`, `If-Match`),
applied one request at a time (infra/services/moto_serialized.py: moto alone lets two
concurrent conditional writes of one key both succeed). It runs as its own process on
127.0.0.1 and a free port, so
executors in other processes, the standalone cluster and containers with host
networking reach it as they would a real store. It keeps objects in memory: copy what
must outlive it (`download`) before `stop()`.

The process carries the cluster markers of infra/cluster (CLUSTER_ENV, OWNER_ENV = this
process), so `reap_orphans()` removes it if the run that started it was SIGKILLed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import IO, TYPE_CHECKING

from infra.cluster.info import CLUSTER_ENV, OWNER_ENV
from infra.cluster.procs import listens_on, terminate
from infra.hosts.placement import LOOPBACK, Placement

if TYPE_CHECKING:
    from botocore.client import BaseClient

# moto accepts any credentials; these are what the run's processes present to it.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "instantbench", "AWS_SECRET_ACCESS_KEY": "instantbench"}
REGION = "us-east-1"


class S3Server:
    """`with S3Server(log) as s3: s3.create_bucket("b"); s3.endpoint` -> http://127.0.0.1:PORT"""

    def __init__(
        self,
        log_path: Path | None = None,
        start_timeout_s: float = 60.0,
        placement: Placement = LOOPBACK,
    ) -> None:
        """placement: where it runs (a host of a run's network; loopback by default)."""
        self.log_path, self.start_timeout_s = log_path, start_timeout_s
        self.placement = placement
        self.endpoint: str | None = None
        self._proc: subprocess.Popen | None = None

    def start(self) -> str:
        if self._proc is not None and self.endpoint is not None:
            return self.endpoint
        env = {**os.environ, CLUSTER_ENV: f"s3-{uuid.uuid4().hex[:8]}", OWNER_ENV: str(os.getpid())}
        for _attempt in range(3):  # the free port can be taken between probe and bind
            port = self.placement.free_port()
            log: IO[bytes] | int = (
                open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
            )
            try:
                self._proc = subprocess.Popen(
                    [
                        *self.placement.launcher,
                        *(sys.executable, "-m", "infra.services.moto_serialized"),
                        *(self.placement.address, str(port)),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,  # a Ctrl-C of the run reaches it through stop()
                )
            finally:
                if not isinstance(log, int):
                    log.close()
            self.endpoint = f"http://{self.placement.address}:{port}"
            if self._wait_up(self._proc, port):
                return self.endpoint
            self.stop()
        raise RuntimeError(f"the S3 server (moto) did not start; log: {self.log_path}")

    def _wait_up(self, proc: subprocess.Popen, port: int) -> bool:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            try:
                self.client().list_buckets()
            except Exception:  # not listening yet
                time.sleep(0.1)
                continue
            # Ours, not a server another run started on the port between probe and bind.
            if listens_on(proc.pid, self.placement.address, port):
                return True
            time.sleep(0.1)
        return False

    def client(self) -> BaseClient:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )

    def create_bucket(self, bucket: str) -> None:
        client = self.client()
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
            client.create_bucket(Bucket=bucket)

    def stop(self) -> None:
        """Stop the server (idempotent); its objects are gone afterwards."""
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate([proc.pid])
            proc.wait()

    def __enter__(self) -> S3Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
