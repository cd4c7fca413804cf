"""RPC between writer tasks (executors) and the coordinator (driver).

multiprocessing.connection carries JSON messages (never pickle: a peer must not be able
to run code in the driver); the run's shared secret authenticates both ends, so no other
process can speak for a writer. The server binds 127.0.0.1 unless told otherwise, runs a
thread per connection, and answers every call within the call timeout (instant requests
answer PENDING rather than wait). Clients retry connection errors and timeouts with
backoff, reusing the request id: the server replays its cached reply, so a retried
send_event is never merged twice.

This module is the client side (and the wire's Endpoint), which needs nothing of the
coordinator; engine/stream/transport/server.py serves a Coordinator.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection
from typing import Any

from engine.stream.backoff import backoff_delays
from engine.stream.errors import TransportError
from engine.stream.transport.base import InstantGrant, poll_instant, raise_for_reply
from engine.stream.write_meta import WriteMetaEvent


@dataclass(frozen=True)
class Endpoint:
    """Where executors find the coordinator; plain data, so it ships in Spark closures."""

    host: str
    port: int
    secret: str  # hex

    @property
    def authkey(self) -> bytes:
        return bytes.fromhex(self.secret)

    @staticmethod
    def new_secret() -> str:
        return secrets.token_hex(32)


class RpcClient:
    """One connection, used by one caller at a time; reconnects on failure."""

    def __init__(self, endpoint: Endpoint, *, timeout_s: float = 10.0, retries: int = 5) -> None:
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.retries = retries
        self.client_id = uuid.uuid4().hex
        self._ids = itertools.count()
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        request = {"client": self.client_id, "id": next(self._ids), "method": method}
        data = json.dumps({**request, "params": params}).encode()
        with self._lock:
            delays = backoff_delays(time.monotonic() + self.timeout_s * (self.retries + 1))
            last: BaseException | None = None
            for _ in range(self.retries + 1):
                try:
                    conn = self._connect()
                    conn.send_bytes(data)
                    if not conn.poll(self.timeout_s):
                        raise TimeoutError(f"no reply to {method} within {self.timeout_s}s")
                    return json.loads(conn.recv_bytes())
                except AuthenticationError:
                    self._reset()
                    raise
                except (OSError, EOFError) as e:  # TimeoutError is an OSError
                    last = e
                    self._reset()
                    delay = next(delays, None)
                    if delay is None:
                        break
                    time.sleep(delay)
        raise TransportError(
            f"{method} to coordinator at {self.endpoint.host}:{self.endpoint.port} failed "
            f"after {self.retries + 1} tries: {last}"
        )

    def _connect(self) -> Connection:
        if self._conn is None:
            self._conn = Client(
                (self.endpoint.host, self.endpoint.port), authkey=self.endpoint.authkey
            )
        return self._conn

    def _reset(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        with self._lock:
            self._reset()


class RpcCoordinatorClient:
    """The writer's CoordinatorClient over RPC."""

    def __init__(self, endpoint: Endpoint, *, timeout_s: float = 10.0, retries: int = 5) -> None:
        self.rpc = RpcClient(endpoint, timeout_s=timeout_s, retries=retries)
        # The server answers PENDING well within the call timeout.
        self.wait_s = min(1.0, timeout_s / 4)

    def request_instant(self, checkpoint_id: int, task_id: int, deadline_s: float) -> InstantGrant:
        return poll_instant(
            lambda: self.rpc.call(
                "request_instant",
                checkpoint_id=checkpoint_id,
                task_id=task_id,
                wait_s=self.wait_s,
            ),
            checkpoint_id,
            deadline_s,
        )

    def send_event(self, event: WriteMetaEvent) -> None:
        raise_for_reply(self.rpc.call("send_event", event=event.to_dict()), "send_event")

    def close(self) -> None:
        self.rpc.close()
