"""The links' faults, applied where the links meet: the bridge in the run's hub namespace
(nftables, bridge family). Each fault has a chain of its own, jumped to from the bridge's
forward hook, so faults may overlap and each heals alone; every rule counts what it
dropped (the fault's evidence).

    table bridge instantbench
      chain forward  (hook forward)   jump fault_N ...
      chain fault_N  ip saddr A ip daddr B [numgen random mod 100 < P] counter drop

Only IPv4 is matched: ARP passes, so a healed link answers at once. (This kernel has no
netem qdisc, so a delay cannot be a kernel rule; drops and random loss can.)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable

from infra.hosts.addresses import HostsError
from infra.hosts.iproute import run_tool
from infra.hosts.network import HostNetwork

TABLE = "instantbench"
Pair = tuple[str, str]  # (from host, to host): packets one way


def _nft(network: HostNetwork, *args: str) -> str:
    if shutil.which("nft") is None:
        raise HostsError("nft is missing: apt-get install nftables")
    return run_tool(*network.launcher_of_hub(), "nft", *args)


def _chain(label: str) -> str:
    return "fault_" + "".join(c if c.isalnum() else "_" for c in label)


def _ensure_table(network: HostNetwork) -> None:
    _nft(network, "add", "table", "bridge", TABLE)
    hook = "{ type filter hook forward priority 0 ; policy accept ; }"
    _nft(network, "add", "chain", "bridge", TABLE, "forward", hook)


def cut(
    network: HostNetwork, label: str, pairs: Iterable[Pair], loss_percent: float | None = None
) -> list[str]:
    """Drop packets from each pair's first host to its second (all of them, or each with
    probability loss_percent); returns the fault's rules as nft lists them."""
    _ensure_table(network)
    chain = _chain(label)
    _nft(network, "add", "chain", "bridge", TABLE, chain)
    _nft(network, "flush", "chain", "bridge", TABLE, chain)
    chance: tuple[str, ...] = ()
    if loss_percent is not None and loss_percent < 100:  # in hundredths of a percent
        chance = ("numgen", "random", "mod", "10000", "<", str(round(loss_percent * 100)))
    for source, target in pairs:
        match = ("ip", "saddr", network.address(source), "ip", "daddr", network.address(target))
        _nft(network, "add", "rule", "bridge", TABLE, chain, *match, *chance, "counter", "drop")
    if not _jumps_to(network, chain):
        _nft(network, "add", "rule", "bridge", TABLE, "forward", "jump", chain)
    return rules(network, label)


def heal(network: HostNetwork, label: str) -> None:
    """Remove the fault's rules (its chain stays, empty: the jump to it does nothing)."""
    _nft(network, "flush", "chain", "bridge", TABLE, _chain(label))


def _chain_json(network: HostNetwork, chain: str) -> list[dict]:
    shown = json.loads(_nft(network, "-j", "list", "chain", "bridge", TABLE, chain))
    return [item["rule"] for item in shown.get("nftables", []) if "rule" in item]


def _jumps_to(network: HostNetwork, chain: str) -> bool:
    return any(
        any(expr.get("jump", {}).get("target") == chain for expr in rule["expr"])
        for rule in _chain_json(network, "forward")
    )


def rules(network: HostNetwork, label: str) -> list[str]:
    """The fault's rules, one line each (nft's own listing)."""
    shown = _nft(network, "list", "chain", "bridge", TABLE, _chain(label))
    return [line.strip() for line in shown.splitlines() if "saddr" in line]


def dropped(network: HostNetwork, label: str) -> int:
    """Packets the fault's rules dropped so far (their counters)."""
    total = 0
    for rule in _chain_json(network, _chain(label)):
        total += sum(expr["counter"]["packets"] for expr in rule["expr"] if "counter" in expr)
    return total
