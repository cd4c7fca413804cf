"""Which address and namespace each host of a run's network has.

Every run's network is a world of its own (its namespaces reach nothing else), so every run
uses the same subnet: an address says the same role in every run's logs. Roles keep the
loopback layout's numbers (the master on .10, worker n on .10+n).
"""

from __future__ import annotations

import re

from infra.cluster.info import ClusterError

SUBNET = "10.77.0"
PREFIX_LENGTH = 24
NAMESPACE_PREFIX = "ib-"  # every namespace a run makes: ib-<network id>-<host>
_FIXED = {"runner": 2, "driver": 3, "s3": 4, "zookeeper": 5, "master": 10}
_NUMBERED = {"worker": (10, 39), "batch_writer": (50, 99)}  # role: (base, most)
_HOST = re.compile(r"^(?P<role>[a-z_0-9]+)(?::(?P<n>[1-9][0-9]*))?$")


class HostsError(ClusterError):
    """A host network could not be made, reached, changed or removed."""


def host_names() -> str:
    """The host names a network may have, for error messages."""
    return ", ".join([*_FIXED, *(f"{role}:N" for role in _NUMBERED)])


def host_address(host: str) -> str:
    """runner -> 10.77.0.2, master -> 10.77.0.10, worker:2 -> 10.77.0.12, ..."""
    match = _HOST.match(host)
    role, n = (match.group("role"), match.group("n")) if match else (host, None)
    if n is None and role in _FIXED:
        return f"{SUBNET}.{_FIXED[role]}"
    if n is not None and role in _NUMBERED and int(n) <= _NUMBERED[role][1]:
        return f"{SUBNET}.{_NUMBERED[role][0] + int(n)}"
    raise HostsError(f"no host {host!r}; allowed: {host_names()}")


def network_prefix(network_id: str) -> str:
    """What the names of one network's namespaces begin with."""
    return f"{NAMESPACE_PREFIX}{network_id}-"


def namespace_name(network_id: str, host: str) -> str:
    """ib-a1b2c3-worker2: a file name in /run/netns (no colon)."""
    return network_prefix(network_id) + host.replace(":", "").replace("_", "")


def hub_name(network_id: str) -> str:
    """The namespace that holds the bridge (no address of its own: it is no host)."""
    return network_prefix(network_id) + "hub"


def port_name(host: str) -> str:
    """The hub's end of a host's link, named by its address (interface names <= 15)."""
    return f"v{host_address(host).rsplit('.', 1)[1]}"
