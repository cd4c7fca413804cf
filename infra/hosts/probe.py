"""A probe across a link: ICMP echoes from one host to another (iputils' ping, run inside
the sender's namespace). A network fault counts as applied once a probe saw its effect
(no echo back, or echoes slower or fewer), and as healed once a probe saw the link well."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

from infra.hosts.addresses import HostsError
from infra.hosts.iproute import exec_prefix

_COUNTS = re.compile(r"(\d+) packets transmitted, (\d+) received")
_RTT = re.compile(r"= [\d.]+/([\d.]+)/([\d.]+)/[\d.]+ ms")


@dataclass(frozen=True)
class Probe:
    source: str
    target: str
    sent: int
    received: int
    rtt_avg_ms: float | None  # None: no echo came back
    rtt_max_ms: float | None

    @property
    def loss(self) -> float:
        return 1.0 - self.received / self.sent if self.sent else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "loss": round(self.loss, 3)}


def probe(
    namespace: str, source: str, target: str, address: str, count: int = 5, wait_s: float = 1.0
) -> Probe:
    """`count` echoes 0.1 s apart from `namespace` (host `source`) to `address` (host
    `target`), each waited for at most wait_s."""
    if shutil.which("ping") is None:
        raise HostsError("ping is missing: apt-get install iputils-ping")
    command = [*exec_prefix(namespace), "ping", "-n", "-q", "-c", str(count), "-i", "0.1"]
    command += ["-W", f"{wait_s:g}", address]
    timeout = count * (0.1 + wait_s) + 10
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    counts = _COUNTS.search(done.stdout)
    if counts is None:
        raise HostsError(f"`{' '.join(command)}` printed no statistics: {done.stderr.strip()}")
    rtt = _RTT.search(done.stdout)
    return Probe(
        source,
        target,
        int(counts.group(1)),
        int(counts.group(2)),
        float(rtt.group(1)) if rtt else None,
        float(rtt.group(2)) if rtt else None,
    )
