"""A real ZooKeeper on loopback for one run (Debian's `zookeeper` package), the server the
`zookeeper` lock provider (engine/locks/zookeeper.py) talks to.

A standalone server (`ZooKeeperServerMain`) on 127.0.0.1 and a free port, its config and
data in a directory of the run, in its own session. It is up once it answers the `ruok`
four-letter word with `imok`. The process carries the cluster markers of infra/cluster
(CLUSTER_ENV, OWNER_ENV = this process), so `reap_orphans()` removes it if the run that
started it was SIGKILLed.

Sessions (the lock leases) may be as short as 2 ticks: the tick is 100 ms, so a test can
expire a paused holder's session in under a second, and a run can use leases of seconds.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

from infra.cluster.info import CLUSTER_ENV, OWNER_ENV
from infra.cluster.procs import listens_on, terminate
from infra.hosts.placement import LOOPBACK, Placement

# Debian's zookeeper package: its config dir (log4j) and the server jar, whose manifest
# names the jars it needs.
CLASSPATH = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar"
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
TICK_MS = 100
MAX_SESSION_MS = 120_000


class ZooKeeperError(RuntimeError):
    pass


def four_letter(host: str, port: int, command: bytes, timeout_s: float = 1.0) -> bytes:
    """The server's whole answer to a four-letter command (it closes the connection)."""
    chunks = []
    with socket.create_connection((host, port), timeout=timeout_s) as s:
        s.sendall(command)
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def ruok(host: str, port: int, timeout_s: float = 1.0) -> bool:
    """True if a ZooKeeper server answers `ruok` with `imok` at host:port."""
    try:
        return four_letter(host, port, b"ruok", timeout_s) == b"imok"
    except OSError:
        return False


class ZooKeeperServer:
    """`with ZooKeeperServer(dir) as zk: zk.endpoint` -> "127.0.0.1:PORT" (a connect string)."""

    def __init__(
        self, work_dir: Path, start_timeout_s: float = 60.0, placement: Placement = LOOPBACK
    ) -> None:
        """placement: where it runs (a host of a run's network; loopback by default)."""
        self.work_dir, self.start_timeout_s = Path(work_dir), start_timeout_s
        self.placement = placement
        self.endpoint: str | None = None
        self._proc: subprocess.Popen | None = None

    def _config(self, port: int) -> Path:
        data = self.work_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        cfg = self.work_dir / "zoo.cfg"
        cfg.write_text(
            f"tickTime={TICK_MS}\n"
            f"dataDir={data}\n"
            f"clientPort={port}\n"
            f"clientPortAddress={self.placement.address}\n"
            f"minSessionTimeout={2 * TICK_MS}\n"
            f"maxSessionTimeout={MAX_SESSION_MS}\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,cons\n"  # cons: whose session holds a lock
        )
        return cfg

    def start(self) -> str:
        if self._proc is not None:
            return str(self.endpoint)
        if not Path(CLASSPATH.rsplit(":", 1)[-1]).exists():
            raise ZooKeeperError(
                "ZooKeeper is not installed (/usr/share/java/zookeeper.jar): "
                "apt-get install zookeeper"
            )
        self.work_dir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, CLUSTER_ENV: f"zk-{uuid.uuid4().hex[:8]}", OWNER_ENV: str(os.getpid())}
        for _attempt in range(3):  # the free port can be taken between probe and bind
            port = self.placement.free_port()
            with open(self.work_dir / "zookeeper.log", "ab") as log:
                self._proc = subprocess.Popen(
                    [
                        *self.placement.launcher,
                        *("java", "-Xmx256m", "-cp", CLASSPATH, MAIN, str(self._config(port))),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self.work_dir,
                    env=env,
                    start_new_session=True,  # a Ctrl-C of the run reaches it through stop()
                )
            self.endpoint = f"{self.placement.address}:{port}"
            if self._wait_up(port):
                return self.endpoint
            self.stop()
        raise ZooKeeperError(f"ZooKeeper did not start; log: {self.work_dir / 'zookeeper.log'}")

    def _wait_up(self, port: int) -> bool:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                return False
            # Ours, not a server another run started on the port between probe and bind.
            address = self.placement.address
            if ruok(address, port) and listens_on(self._proc.pid, address, port):
                return True
            time.sleep(0.1)
        return False

    def stop(self) -> None:
        """Stop the server (idempotent); its data stays in work_dir."""
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate([proc.pid])
            proc.wait()

    def __enter__(self) -> ZooKeeperServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
