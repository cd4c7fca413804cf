"""RPC between writer tasks (executors) and the coordinator (driver).

multiprocessing.connection carries JSON messages (never pickle: a peer must not be able
to run code in the driver); the run's shared secret authenticates both ends, so no other
process can speak for a writer. The server binds 127.0.0.1 unless told otherwise, runs a
thread per connection, and answers every call within the call timeout (instant requests
answer PENDING rather than wait). Clients retry connection errors and timeouts with
backoff, reusing the request id: the server replays its cached reply, so a retried
send_event is never merged twice.
"""

from __future__ import annotations

import itertools
import json
import logging
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import (
    Client,
    Connection,
    Listener,
    answer_challenge,
    deliver_challenge,
)
from typing import Any

from engine.lock import LeaseLock, LockService
from engine.stream.backoff import backoff_delays
from engine.stream.coordinator import Coordinator
from engine.stream.errors import StreamError, TransportError
from engine.stream.transport.base import InstantGrant, poll_instant, raise_for_reply
from engine.stream.write_meta import WriteMetaEvent

log = logging.getLogger(__name__)


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


class CoordinatorServer:
    """Serves a Coordinator (and optionally a LockService) to remote writers."""

    def __init__(
        self,
        coordinator: Coordinator,
        *,
        secret: str,
        host: str = "127.0.0.1",
        port: int = 0,
        lock_service: LockService | None = None,
        max_wait_s: float = 1.0,
        reply_cache: int = 10_000,
    ) -> None:
        self.coordinator = coordinator
        self.lock_service = lock_service
        self.max_wait_s = max_wait_s
        self._authkey = bytes.fromhex(secret)
        self._secret = secret
        # No authkey on the listener: the handshake runs in the connection's own thread,
        # so a silent peer cannot stall accept() for everyone else.
        self._listener = Listener((host, port), backlog=128)
        self._replies: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
        self._replies_max = reply_cache
        self._replies_lock = threading.Lock()
        self._closed = threading.Event()
        self._conns: set[Connection] = set()
        self._conns_lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="rpc-accept", daemon=True)
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "ping": lambda p: {"status": "OK"},
            "request_instant": self._request_instant,
            "send_event": self._send_event,
            "lock.acquire": self._lock_call("acquire"),
            "lock.renew": self._lock_call("renew"),
            "lock.release": self._lock_call("release"),
            "lock.holder_record": self._lock_call("holder_record"),
        }

    @property
    def endpoint(self) -> Endpoint:
        host, port = self._listener.address
        return Endpoint(host, port, self._secret)

    def start(self) -> Endpoint:
        self._thread.start()
        return self.endpoint

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            self._drop(conn)

    def _drop(self, conn: Connection) -> None:
        """Close `conn` once: close() and its serving thread may both get here, and a second
        close of the same descriptor could close a file that has reused its number."""
        with self._conns_lock:
            if conn not in self._conns:
                return
            self._conns.discard(conn)
        conn.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        with self._conns_lock:
            self._conns.add(conn)
        try:
            deliver_challenge(conn, self._authkey)
            answer_challenge(conn, self._authkey)
            while not self._closed.is_set():
                request = json.loads(conn.recv_bytes())
                conn.send_bytes(json.dumps(self._handle(request)).encode())
        except (EOFError, OSError, AuthenticationError):
            pass  # the peer went away (or was not one of ours)
        finally:
            self._drop(conn)

    def _handle(self, request: dict[str, Any]) -> dict[str, Any]:
        key = (str(request.get("client")), int(request.get("id", -1)))
        with self._replies_lock:
            cached = self._replies.get(key)
        if cached is not None:
            return cached
        handler = self._handlers.get(request.get("method", ""))
        if handler is None:
            return {"status": "ERROR", "error": f"unknown method {request.get('method')!r}"}
        try:
            reply = handler(request.get("params", {}))
        except Exception as e:  # an error is an answer, not a dropped connection
            log.exception("rpc %s failed", request.get("method"))
            reply = {"status": "ERROR", "error": f"{type(e).__name__}: {e}"}
        with self._replies_lock:
            self._replies[key] = reply
            while len(self._replies) > self._replies_max:
                self._replies.popitem(last=False)
        return reply

    def _request_instant(self, p: dict[str, Any]) -> dict[str, Any]:
        wait_s = min(self.max_wait_s, float(p.get("wait_s", self.max_wait_s)))
        return self.coordinator.request_instant(int(p["checkpoint_id"]), int(p["task_id"]), wait_s)

    def _send_event(self, p: dict[str, Any]) -> dict[str, Any]:
        return self.coordinator.handle_event(WriteMetaEvent.from_dict(p["event"]))

    def _lock_call(self, name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def call(p: dict[str, Any]) -> dict[str, Any]:
            if self.lock_service is None:
                return {"status": "ERROR", "error": "this coordinator serves no lock"}
            return {"status": "OK", "result": getattr(self.lock_service, name)(**p)}

        return call


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


class RpcLeaseClient:
    """engine.lock.LeaseClient over RPC: the coordinator's LockService, remotely."""

    def __init__(self, endpoint: Endpoint, *, timeout_s: float = 10.0, retries: int = 5) -> None:
        self.rpc = RpcClient(endpoint, timeout_s=timeout_s, retries=retries)

    def _call(self, method: str, **params: Any) -> Any:
        reply = self.rpc.call(method, **params)
        if reply.get("status") != "OK":
            raise StreamError(f"{method}: {reply.get('error')}")
        return reply["result"]

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        return self._call("lock.acquire", name=name, owner=owner, lease_s=lease_s)

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        return self._call("lock.renew", name=name, token=token, lease_s=lease_s)

    def release(self, name: str, token: int) -> bool:
        return self._call("lock.release", name=name, token=token)


def rpc_lock(
    endpoint: Endpoint, name: str = "table", holder_id: str | None = None, lease_s: float = 10.0
) -> LeaseLock:
    """An engine LockProvider backed by the coordinator's LockService (Table.open(lock=...))."""
    return LeaseLock(RpcLeaseClient(endpoint), name, holder_id=holder_id, lease_s=lease_s)
