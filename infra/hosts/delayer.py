"""A link's delay in user space: packets a host sends to chosen destinations are queued by
the kernel (an NFQUEUE rule in the host's OUTPUT chain) and let go by this process after
the delay (+- jitter). This machine's kernel has no netem qdisc; the netfilter queue is
the one place a delay can be added. Run inside the sending host's namespace:

    python -m infra.hosts.delayer QUEUE DELAY_MS JITTER_MS

The rule is installed with --queue-bypass, so packets pass undelayed while no delayer
listens (before it binds, after it dies): a dead delayer never turns into a partition.
The netfilter queue's netlink messages are packed here (struct): nfnetlink_queue(7).
"""

from __future__ import annotations

import heapq
import os
import random
import signal
import socket
import struct
import sys
import threading
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN = 1, 2, 3
NFQA_CFG_MASK, NFQA_CFG_FLAGS = 4, 5
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_CFG_F_FAIL_OPEN = 1
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
QUEUE_LENGTH = 65536  # packets held at once (each waits delay_ms)


def _attribute(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def _message(kind: int, queue: int, attributes: bytes, flags: int = NLM_F_REQUEST) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attributes
    header = struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, 0, 0)
    return header + body


def bind(sock: socket.socket, queue: int) -> None:
    """Bind the queue, ask for packet ids only, fail open when full."""
    commands = [
        _attribute(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, socket.AF_INET)),
        _attribute(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))
        + _attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", QUEUE_LENGTH))
        + _attribute(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN))
        + _attribute(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)),
    ]
    for attributes in commands:
        sock.send(_message(NFQNL_MSG_CONFIG, queue, attributes, NLM_F_REQUEST | NLM_F_ACK))
        reply = sock.recv(65536)
        kind = struct.unpack_from("=H", reply, 4)[0]
        error = struct.unpack_from("=i", reply, 16)[0] if kind == NLMSG_ERROR else 0
        if error:
            raise OSError(-error, f"binding netfilter queue {queue}: {os.strerror(-error)}")


def packet_ids(datagram: bytes) -> list[int]:
    """The ids of the queued packets in one netlink datagram."""
    ids, offset = [], 0
    while offset + 16 <= len(datagram):
        length, kind = struct.unpack_from("=IH", datagram, offset)
        if length < 16:
            break
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            at = offset + 20  # after nlmsghdr and nfgenmsg
            while at + 4 <= offset + length:
                size, attribute = struct.unpack_from("=HH", datagram, at)
                if attribute & 0x7FFF == NFQA_PACKET_HDR:
                    ids.append(struct.unpack_from("!I", datagram, at + 4)[0])
                at += max(size, 4) + (-size % 4)
        offset += length + (-length % 4)
    return ids


def verdict(queue: int, packet_id: int) -> bytes:
    return _message(
        NFQNL_MSG_VERDICT,
        queue,
        _attribute(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id)),
    )


def serve(queue: int, delay_ms: float, jitter_ms: float) -> None:
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    bind(sock, queue)
    held: list[tuple[float, int]] = []
    ready = threading.Condition()

    def release() -> None:
        while True:
            with ready:
                while not held:
                    ready.wait()
                due, packet_id = held[0]
                wait = due - time.monotonic()
                if wait > 0:
                    ready.wait(wait)
                    continue
                heapq.heappop(held)
            sock.send(verdict(queue, packet_id))

    threading.Thread(target=release, daemon=True).start()
    print("bound", flush=True)  # the parent waits for this before it installs the rule
    while True:
        ids = packet_ids(sock.recv(1 << 20))
        now = time.monotonic()
        with ready:
            for packet_id in ids:
                wait_ms = max(0.0, delay_ms + random.uniform(-jitter_ms, jitter_ms))
                heapq.heappush(held, (now + wait_ms / 1000, packet_id))
            ready.notify()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]))
