"""The loopback addresses a cluster binds: the master on 127.0.0.10 (by default), worker n
on 127.0.0.(10+n), each with its own address (DESIGN.md, practical notes), and whether
they are free."""

from __future__ import annotations

import os
import socket

from infra.cluster.info import ClusterError

MASTER_HOST = "127.0.0.10"
# Moves a run's cluster to another address block (master there, workers on the next
# addresses): two harnesses on one machine, such as two test lanes (tests/conftest.py),
# each keep their own.
MASTER_HOST_ENV = "INSTANTBENCH_MASTER_HOST"
MASTER_PORT = 7077
WEB_PORT = 8080
WORKER_WEB_PORT = 8081


def worker_host(master_host: str, n: int) -> str:
    """127.0.0.10 -> worker 1 on 127.0.0.11, worker 2 on 127.0.0.12, ..."""
    a, b, c, d = (int(x) for x in master_host.split("."))
    if a != 127 or d + n > 254:
        raise ClusterError(f"no loopback address for worker {n} after {master_host}")
    return f"{a}.{b}.{c}.{d + n}"


def default_master_host() -> str:
    """The master address of a run's cluster: $INSTANTBENCH_MASTER_HOST, else 127.0.0.10."""
    return os.environ.get(MASTER_HOST_ENV) or MASTER_HOST


def check_port_free(host: str, port: int) -> None:
    if not host.startswith("127."):
        raise ClusterError(f"{host}: clusters bind loopback addresses (127.0.0.0/8) only")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise ClusterError(
                f"{host}:{port} is in use ({exc.strerror}): another cluster is running? "
                f"`instantbench cluster status` / `instantbench cluster down` or choose "
                f"another master address"
            ) from None
