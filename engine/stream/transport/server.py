"""The RPC server (engine/stream/transport/rpc.py is the client side): serves a Coordinator,
and optionally the table's LockService, to remote writers."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from multiprocessing import AuthenticationError
from multiprocessing.connection import (
    Connection,
    Listener,
    answer_challenge,
    deliver_challenge,
)
from typing import Any

from engine.locks.service import LockService
from engine.stream.coordinator import Coordinator
from engine.stream.transport.rpc import Endpoint
from engine.stream.write_meta import WriteMetaEvent

log = logging.getLogger(__name__)


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
