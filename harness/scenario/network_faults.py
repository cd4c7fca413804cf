"""Network faults (`partition`, `link_latency`, `packet_loss`): they act on the links
between a run's hosts (`cluster.backend: hosts`), named as the hosts are: runner, driver,
master, worker:N, s3, zookeeper. Whether a named host exists in the run is checked against
the rest of the scenario in rules.py."""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.scenario.base import PosSeconds
from harness.scenario.fault_base import FaultBase, TargetForms
from harness.scenario.points import CoordinatorPoint

HostTarget = Annotated[str, TargetForms(("host",))]
MAX_LINK_DELAY_MS = 10_000.0  # past ten seconds a link is cut, not slow: a partition
Link = Annotated[list[HostTarget], Field(min_length=2, max_length=2)]


class Partition(FaultBase):
    kind: Literal["partition"]
    """Cut hosts apart (hosts backend): packets from a host of one group to a host of
    another are dropped without a word, as by a cut cable, so connections stall until they
    time out; healed after duration_s."""
    groups: Annotated[list[list[HostTarget]], Field(min_length=2)] | None = None
    """Two or more groups of hosts, e.g. [[driver], [worker:1, worker:2]]; a host in no
    group keeps every link."""
    isolate: HostTarget | None = None
    """One host cut from all others (instead of groups)."""
    one_way: bool = False
    """Only packets leaving the first group (or the isolated host) are dropped: datagrams
    the other way arrive, a TCP connection either way stalls (its replies are lost)."""
    duration_s: PosSeconds = 10
    """How long the cut lasts (s)."""
    point: CoordinatorPoint | None = None
    """The cut begins when the driver's coordinator next reaches this commit seam after
    at_s (mid_commit: holding the table lock, before its completed instant is written),
    and the coordinator stays there until the cut healed: a critical section that outlasts
    the cut, as a stalled store or a long pause makes one. None: at at_s, wherever the run
    is. Needs the driver among the cut hosts."""

    @model_validator(mode="after")
    def _groups_or_isolate(self) -> "Partition":
        if (self.groups is None) == (self.isolate is None):
            raise ValueError("give either groups or isolate (exactly one)")
        named = [h for group in self.groups or [] for h in group]
        if any(not group for group in self.groups or []):
            raise ValueError("every group needs at least one host")
        if len(set(named)) != len(named):
            raise ValueError("a host may be in one group only")
        if self.point is not None and "driver" not in [*named, self.isolate]:
            raise ValueError("point is a seam of the driver's coordinator: cut the driver")
        return self


class _LinkFault(FaultBase):
    link: Link | None = None
    """The link between two hosts, e.g. [driver, s3]: both directions."""
    target: HostTarget | None = None
    """Every link of one host: what it sends and receives (instead of link)."""
    duration_s: PosSeconds = 10
    """How long (s)."""

    @model_validator(mode="after")
    def _link_or_target(self) -> "_LinkFault":
        if (self.link is None) == (self.target is None):
            raise ValueError("give either link or target (exactly one)")
        if self.link is not None and self.link[0] == self.link[1]:
            raise ValueError("a link joins two different hosts")
        return self


class LinkLatency(_LinkFault):
    kind: Literal["link_latency"]
    """Slow links (hosts backend): each IP packet on the link (or to and from the target)
    waits delay_ms +- jitter_ms, so a round trip across it grows by twice that."""
    delay_ms: Annotated[float, Field(gt=0, le=MAX_LINK_DELAY_MS)]
    """Milliseconds each packet waits, each way."""
    jitter_ms: Annotated[float, Field(ge=0, le=MAX_LINK_DELAY_MS)] = 0
    """Random variation of the delay (uniform, +- ms; at most delay_ms)."""

    @model_validator(mode="after")
    def _jitter_within_delay(self) -> "LinkLatency":
        if self.jitter_ms > self.delay_ms:
            raise ValueError("jitter_ms may be at most delay_ms (a packet waits >= 0)")
        return self


class PacketLoss(_LinkFault):
    kind: Literal["packet_loss"]
    """Lossy links (hosts backend): each IP packet on the link (or out of the target) is
    dropped with this probability; TCP retransmits, datagrams are lost."""
    percent: Annotated[float, Field(gt=0, le=100)]
    """Percent of packets dropped."""


NetworkFault = Partition | LinkLatency | PacketLoss
NETWORK_KINDS = ("partition", "link_latency", "packet_loss")
