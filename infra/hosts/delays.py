"""Delayed links: for each host a delayed link leaves from, a delayer in that host
(infra/hosts/delayer.py) and an iptables rule in its OUTPUT chain that queues its packets
to the delayed destinations; healed by removing the rules, then the delayers (the rules
bypass a queue no one listens on, so the order never cuts a link)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable

from infra.cluster.procs import terminate
from infra.hosts.addresses import HostsError
from infra.hosts.iproute import run_tool
from infra.hosts.network import HostNetwork

Pair = tuple[str, str]


class LinkDelay:
    """One fault's delays: `pairs` (from host, to host), each packet held delay_ms +-
    jitter_ms; `queue` numbers its netfilter queue (one per fault, in every host)."""

    def __init__(
        self,
        network: HostNetwork,
        label: str,
        queue: int,
        pairs: Iterable[Pair],
        delay_ms: float,
        jitter_ms: float = 0.0,
    ) -> None:
        self.network, self.label, self.queue = network, label, queue
        self.pairs = list(pairs)
        self.delay_ms, self.jitter_ms = delay_ms, jitter_ms
        self._delayers: dict[str, subprocess.Popen[str]] = {}

    def _iptables(self, host: str, *args: str, check: bool = True) -> str:
        if shutil.which("iptables") is None:
            raise HostsError("iptables is missing: apt-get install iptables")
        command = (*self.network.launcher(host), "iptables", "-t", "mangle", *args)
        return run_tool(*command, check=check)

    def _rule(self, target: str) -> list[str]:
        address = self.network.address(target)
        queue = ("-j", "NFQUEUE", "--queue-num", str(self.queue), "--queue-bypass")
        return ["OUTPUT", "-d", f"{address}/32", "-m", "comment", "--comment", self.label, *queue]

    def start(self) -> list[str]:
        """Start the delayers (side by side: each is a Python start-up), then queue their
        hosts' packets to them; the rules."""
        sources = sorted({s for s, _ in self.pairs})
        for source in sources:
            self._delayers[source] = self._spawn_delayer(source)
        for source in sources:
            self._wait_bound(source, self._delayers[source])
        for source, target in self.pairs:
            self._iptables(source, "-A", *self._rule(target))
        return self.rules()

    def _spawn_delayer(self, host: str) -> subprocess.Popen[str]:
        command = [*self.network.launcher(host), sys.executable, "-m", "infra.hosts.delayer"]
        command += [str(self.queue), f"{self.delay_ms:g}", f"{self.jitter_ms:g}"]
        return subprocess.Popen(command, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def _wait_bound(self, host: str, delayer: subprocess.Popen[str]) -> None:
        assert delayer.stdout is not None
        line = delayer.stdout.readline()  # "bound", or nothing if it failed
        if line.strip() != "bound":
            self.stop()
            said = delayer.stderr.read() if delayer.stderr else ""
            raise HostsError(f"the delayer on {host} did not bind queue {self.queue}: {said}")

    def rules(self) -> list[str]:
        """The fault's rules, as iptables lists them, in every host it delays from."""
        hosts = sorted({s for s, _ in self.pairs})
        listed = [line for h in hosts for line in self._iptables(h, "-S", "OUTPUT").splitlines()]
        return [line for line in listed if f'"{self.label}"' in line or f" {self.label} " in line]

    def stop(self) -> None:
        """Remove the rules, then the delayers (idempotent)."""
        for source, target in self.pairs:
            self._iptables(source, "-D", *self._rule(target), check=False)
        terminate([d.pid for d in self._delayers.values()])
        for delayer in self._delayers.values():
            delayer.wait()
        self._delayers.clear()
