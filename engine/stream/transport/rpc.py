"""The RPC transport: a server in the driver process, clients in the executors.

Built on multiprocessing.connection: TCP (127.0.0.1 by default) with the run's shared
secret as authkey, so every connection passes an HMAC challenge before it may speak for
a writer. Messages are JSON (never pickle), one request and one reply at a time per
connection; the server runs a thread per connection.

Retries: a call is retried (with a new connection) only when the request could not be
sent. Once sent, a lost reply is an error for the caller, because resending an event
could report the same files twice; a failed writer task is retried by Spark instead.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Client, Connection, Listener
from typing import Any

from engine.lock import LockService
from engine.stream.backoff import backoff_delays
from engine.stream.errors import StreamError
from engine.stream.transport.base import InstantGrant, poll_instant, raise_for_reply
from engine.stream.write_meta import WriteMetaEvent

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_S = 10.0
DEFAULT_CONNECT_DEADLINE_S = 30.0
# How long one instant request may hold the call before answering PENDING (Hudi #19902).
REQUEST_WAIT_S = 0.5


class RpcError(StreamError):
    """The call failed on the wire (no connection, no reply in time, refused)."""


class RpcServer:
    """Serves a Coordinator (and, optionally, a LockService) to remote writers."""

    def __init__(
        self,
        coordinator: Any,
        *,
        secret: bytes,
        host: str = "127.0.0.1",
        port: int = 0,
        lock_service: LockService | None = None,
    ) -> None:
        self.coordinator = coordinator
        self.lock_service = lock_service or LockService()
        self._listener = Listener((host, port), authkey=secret)
        self._closed = threading.Event()
        self._connections: set[Connection] = set()
        self._mutex = threading.Lock()
        self._thread = threading.Thread(target=self._accept_loop, name="rpc-accept", daemon=True)
        self._methods: dict[str, Callable[..., Any]] = {
            "ping": lambda: "pong",
            "request_instant": self._request_instant,
            "send_event": self._send_event,
            "lock_acquire": self.lock_service.acquire,
            "lock_renew": self.lock_service.renew,
            "lock_release": self.lock_service.release,
        }

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._listener.address
        return str(host), int(port)

    def start(self) -> RpcServer:
        self._thread.start()
        return self

    def _request_instant(self, checkpoint_id: int, task_id: int) -> dict[str, Any]:
        return self.coordinator.request_instant(checkpoint_id, task_id, REQUEST_WAIT_S)

    def _send_event(self, event: dict[str, Any]) -> dict[str, Any]:
        return self.coordinator.handle_event(WriteMetaEvent.from_dict(event))

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                conn = self._listener.accept()
            except OSError:
                if self._closed.is_set():
                    return
                continue  # a peer that failed the HMAC challenge, or went away mid-handshake
            with self._mutex:
                self._connections.add(conn)
            threading.Thread(target=self._serve, args=(conn,), name="rpc-conn", daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        try:
            while not self._closed.is_set():
                try:
                    request = json.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    return
                conn.send_bytes(json.dumps(self._dispatch(request)).encode())
        except (OSError, ValueError):
            return
        finally:
            with self._mutex:
                self._connections.discard(conn)
            conn.close()

    def _dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        method = self._methods.get(request.get("method", ""))
        if method is None:
            return {"id": request.get("id"), "error": f"unknown method {request.get('method')!r}"}
        try:
            return {"id": request.get("id"), "result": method(**request.get("params", {}))}
        except Exception as exc:  # the caller gets the error; the server keeps serving
            log.exception("rpc %s failed", request.get("method"))
            return {"id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"}

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        with self._mutex:
            connections = list(self._connections)
        for conn in connections:
            conn.close()


class RpcClient:
    """A writer's connection to the coordinator; also a LeaseClient for `LeaseLock`."""

    def __init__(
        self,
        address: tuple[str, int],
        secret: bytes,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        connect_deadline_s: float = DEFAULT_CONNECT_DEADLINE_S,
    ) -> None:
        self.address = address
        self.secret = secret
        self.call_timeout_s = call_timeout_s
        self.connect_deadline_s = connect_deadline_s
        self._conn: Connection | None = None
        self._mutex = threading.Lock()
        self._next_id = 0

    def _connect(self) -> Connection:
        delays = backoff_delays(time.monotonic() + self.connect_deadline_s)
        while True:
            try:
                return Client(self.address, authkey=self.secret)
            except (OSError, EOFError) as exc:
                delay = next(delays, None)
                if delay is None:
                    raise RpcError(
                        f"cannot reach the coordinator at {self.address}: {exc}"
                    ) from exc
                time.sleep(delay)

    def call(self, method: str, timeout_s: float | None = None, **params: Any) -> Any:
        timeout = self.call_timeout_s if timeout_s is None else timeout_s
        with self._mutex:
            self._next_id += 1
            payload = json.dumps({"id": self._next_id, "method": method, "params": params})
            for attempt in (1, 2):
                if self._conn is None:
                    self._conn = self._connect()
                try:
                    self._conn.send_bytes(payload.encode())
                    break
                except OSError as exc:  # not sent: safe to retry on a fresh connection
                    self._drop()
                    if attempt == 2:
                        raise RpcError(f"{method}: cannot send to {self.address}: {exc}") from exc
            try:
                if not self._conn.poll(timeout):
                    self._drop()
                    raise RpcError(f"{method}: no reply from {self.address} within {timeout}s")
                reply = json.loads(self._conn.recv_bytes())
            except (EOFError, OSError) as exc:
                self._drop()
                raise RpcError(f"{method}: connection to {self.address} lost: {exc}") from exc
        if "error" in reply:
            raise RpcError(f"{method}: {reply['error']}")
        return reply["result"]

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
            self._conn = None

    def close(self) -> None:
        with self._mutex:
            self._drop()

    # -- CoordinatorClient --------------------------------------------------------------
    def request_instant(self, checkpoint_id: int, task_id: int, deadline_s: float) -> InstantGrant:
        return poll_instant(
            lambda: self.call("request_instant", checkpoint_id=checkpoint_id, task_id=task_id),
            checkpoint_id,
            deadline_s,
        )

    def send_event(self, event: WriteMetaEvent) -> None:
        raise_for_reply(self.call("send_event", event=event.to_dict()), "send_event")

    def ping(self) -> bool:
        return self.call("ping") == "pong"

    # -- LeaseClient (the coordinator's lock service, for writers on other machines) ----
    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        return self.call("lock_acquire", name=name, owner=owner, lease_s=lease_s)

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        return self.call("lock_renew", name=name, token=token, lease_s=lease_s)

    def release(self, name: str, token: int) -> bool:
        return self.call("lock_release", name=name, token=token)
