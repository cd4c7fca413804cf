"""The `zookeeper` lock provider: a real ZooKeeper, through kazoo's Lock recipe, as Apache
Hudi's ZookeeperBasedLockProvider uses Curator's InterProcessMutex.

Under `<path>/lock` every contender creates an ephemeral sequential node; the lowest one
holds the lock. The lease is the ZooKeeper session: a holder whose process stops sends no
heartbeats, the server expires its session on its own clock (the session timeout,
`lease_s`) and deletes its node, and the next contender holds the lock. No client clock is
compared, so clock skew cannot make a live lease look expired.

Fencing token: the sequence number of the holder's lock node. ZooKeeper numbers a parent's
sequential children in creation order and the lock goes to the lowest, so the holders'
tokens increase and are never handed out twice.

Take-over. The recipe does not tell a new holder that its predecessor's session expired
mid-hold, and fencing (engine/table/fencing.py) needs exactly that, with the old token.
So every holder also writes `<path>/holder` = {state: held, owner, token} right after it
got the lock, and {state: free, ...} before it deletes its node; a new holder that finds
`held` under someone else's token took over an expired lease and calls
`on_takeover(old token)` before anything else. Both writes are conditional on the znode
version the writer read (a stale holder's late "free" cannot overwrite a newer record).

kazoo is imported here only, lazily: the engine works without it for other providers.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from engine.errors import LockTimeoutError
from engine.locks.base import (
    DEFAULT_TIMEOUT_S,
    LockProvider,
    Record,
    default_owner,
    record_successor,
)

CONNECT_TIMEOUT_S = 15.0
COMMAND_TIMEOUT_S = 10.0  # one attempt of a command
COMMAND_DEADLINE_S = 30.0  # all its retries
# kazoo logs every dropped connection (a paused holder's expired session is one, by
# design) as a warning; the engine's logger keeps them for whoever configures logging
# instead of Python's last-resort printing to stderr.
log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())


class ZooKeeperLock(LockProvider):
    def __init__(
        self,
        hosts: str,
        path: str,
        holder_id: str | None = None,
        lease_s: float = 10.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        on_takeover: Callable[[object], None] | None = None,
    ) -> None:
        self.hosts, self.path, self.lease_s = hosts, path.rstrip("/"), lease_s
        self.holder_id = holder_id or default_owner()
        self.timeout_s, self.on_takeover = timeout_s, on_takeover
        self.token: int | None = None  # the sequence number of our lock node
        self._record_version: int | None = None  # of the holder record we wrote
        self._client: Any = None
        self._lock: Any = None  # kazoo's Lock of the current hold
        self._mutex = threading.Lock()  # threads of this process
        self._client_mutex = threading.Lock()
        # `known_dead` (LockProvider): a contender it judges dead (a restarted
        # coordinator: a node of its own identity is its sealed predecessor's) has its
        # node deleted instead of waiting out that session.

    @property
    def endpoint(self) -> str:
        return f"zookeeper://{self.hosts}{self.path}"

    def client(self) -> Any:
        """The kazoo client, connected (one session per lock object)."""
        with self._client_mutex:
            if self._client is None:
                from kazoo.client import KazooClient

                # Commands retry across a lost connection or an expired session, but not
                # forever (kazoo's default): a ZooKeeper that stays away fails the call.
                retry = {"max_tries": None, "max_delay": 1.0, "deadline": COMMAND_DEADLINE_S}
                client = KazooClient(
                    hosts=self.hosts, timeout=self.lease_s, logger=log, command_retry=retry
                )
                client.start(timeout=CONNECT_TIMEOUT_S)
                self._client = client
                self._zk("ensure_path", f"{self.path}/lock")
            return self._client

    def _zk(self, command: str, *args: Any, **kwargs: Any) -> Any:
        """A ZooKeeper command, retried across a lost connection or an expired session
        (a new one then) and failing after COMMAND_DEADLINE_S: kazoo's blocking calls
        wait forever for a server that stays away."""
        call = getattr(self._client, f"{command}_async")
        return self._client.retry(lambda: call(*args, **kwargs).get(timeout=COMMAND_TIMEOUT_S))

    def _read_record(self) -> tuple[Record | None, int]:
        """(holder record, its znode version); (None, -1) if there is none yet."""
        from kazoo.exceptions import NoNodeError

        self.client()
        try:
            data, stat = self._zk("get", f"{self.path}/holder")
        except NoNodeError:
            return None, -1
        return (json.loads(data) if data else None), stat.version

    def _write_record(self, record: Record, version: int) -> int | None:
        """Write the holder record if it is still at `version` (-1: absent); its new
        version, or None if someone wrote it first."""
        from kazoo.exceptions import BadVersionError, NodeExistsError

        data = json.dumps(record).encode()
        self.client()
        try:
            if version < 0:
                self._zk("create", f"{self.path}/holder", data)
                return 0
            return self._zk("set", f"{self.path}/holder", data, version=version).version
        except (BadVersionError, NodeExistsError):
            return None

    @property
    def holder(self) -> str | None:
        """The identifier of the lowest contender (the holder), None if nobody holds it."""
        from kazoo.exceptions import NoNodeError

        self.client()
        parent = f"{self.path}/lock"
        nodes = sorted(self._zk("get_children", parent), key=lambda n: n.rsplit("__", 1)[-1])
        for node in nodes:
            try:
                return self._zk("get", f"{parent}/{node}")[0].decode()
            except NoNodeError:
                continue  # released meanwhile
        return None

    def acquire(self, timeout_s: float | None = None) -> None:
        from kazoo.exceptions import LockTimeout

        timeout = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        if not self._mutex.acquire(timeout=timeout):
            raise LockTimeoutError(self.path, timeout, None)
        try:
            self._remove_dead()
            lock = self.client().Lock(f"{self.path}/lock", identifier=self.holder_id)
            try:
                got = lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
            except LockTimeout:
                got = False
            if not got:
                raise LockTimeoutError(self.endpoint, timeout, self.holder)
            self._lock, self.token = lock, int(lock.node.rsplit("__lock__", 1)[-1])
            self._record_hold()
        except BaseException:
            self._release_lock()
            self._mutex.release()
            raise

    def _remove_dead(self) -> None:
        """Delete the lock nodes of contenders `known_dead` judges dead (the take-over
        then revokes their token through the holder record, as after a session expiry)."""
        if self.known_dead is None:
            return
        from kazoo.exceptions import NoNodeError

        self.client()
        parent = f"{self.path}/lock"
        for child in self._zk("get_children", parent):
            try:
                owner, _ = self._zk("get", f"{parent}/{child}")
                if self.known_dead({"owner": owner.decode()}):
                    self._zk("delete", f"{parent}/{child}")
            except NoNodeError:
                continue  # released meanwhile

    def _record_hold(self) -> None:
        """Write our hold into the holder record; revoke a predecessor that never freed it."""
        previous, version = self._read_record()
        record = {"state": "held", "owner": self.holder_id, "token": self.token}
        written = self._write_record(record, version)
        if written is None:  # only the expired holder's late "free" races us: read again
            written = self._write_record(record, self._read_record()[1])
            if written is None:
                raise LockTimeoutError(self.endpoint, 0.0, "a racing holder record")
        self._record_version = written
        # Judged on the first read: a predecessor that freed the record only after we held
        # the lock wrote its critical section past its session (revoking a spent token is
        # harmless).
        if previous is not None and previous.get("state") == "held" and self.on_takeover:
            self.on_takeover(previous.get("token"))

    def _release_lock(self) -> None:
        from kazoo.exceptions import NoNodeError

        lock, self._lock, self.token = self._lock, None, None
        if lock is not None and lock.node is not None:
            # Our node goes (kazoo's release would wait forever for a server that is gone;
            # then the node goes with the session).
            with contextlib.suppress(NoNodeError):
                self._zk("delete", f"{self.path}/lock/{lock.node}")

    def release(self) -> None:
        try:
            if self._record_version is not None:
                free = {"state": "free", "owner": self.holder_id, "token": self.token}
                self._write_record(free, self._record_version)  # None: taken over meanwhile
                self._record_version = None
            self._release_lock()
        finally:
            self._mutex.release()

    def successor(self, token: object) -> str | None:
        """Who wrote the holder record after the hold `token`; None while it is the newest."""
        return record_successor(self._read_record()[0], token)

    def suspend_renewal(self, suspended: bool) -> None:
        """Fault injection: a stopped process sends ZooKeeper no heartbeat, so the server
        expires its session (the lease) on its own clock. kazoo's connection thread pings
        by `_send_ping`; shadowing it on the connection object silences the session, and
        removing the shadow lets it ping again (it then finds its session expired and
        starts a new one; the lock node is gone with the old one)."""
        connection = self._client._connection if self._client is not None else None
        if connection is None:
            return
        if suspended:
            connection._send_ping = lambda *_: None
        else:
            connection.__dict__.pop("_send_ping", None)

    def close(self) -> None:
        """Close the session (its ephemeral nodes go with it)."""
        with self._client_mutex:
            client, self._client = self._client, None
        if client is not None:
            client.stop()
            client.close()
