"""partition and packet_loss are recorded only once the runner's probes saw their effect
and their heal (harness/faults/network.py), on real hosts (network namespaces): a cut
that does not cut is never recorded as applied. Needs root, iproute2, nftables, ping."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fault_occurrence import occurrence

from harness.faults import network as network_module
from harness.faults.fired import FiredLog
from harness.faults.network import NetworkFaults, fault_pairs
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock
from infra.hosts import HostNetwork

HOSTS = ["runner", "driver", "worker:1", "worker:2"]


@pytest.fixture(scope="module")
def network():
    with HostNetwork(HOSTS) as net:
        yield net


def _faults(tmp_path: Path, network: HostNetwork, *occurrences: Any) -> NetworkFaults:
    history = HistoryWriter(tmp_path / "history", "runner")
    clock = RunClock(t0=time.time())  # the faults are due at once
    return NetworkFaults(network, list(occurrences), clock, history, FiredLog(tmp_path / "fired"))


def _recorded(tmp_path: Path) -> list[dict[str, Any]]:
    return [e for e in read_events(tmp_path / "history") if e["kind"] == "fault"]


def _run_to_end(faults: NetworkFaults, timeout_s: float = 30) -> None:
    faults.start()
    deadline = time.monotonic() + timeout_s
    while faults._thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    faults.stop()


def test_a_partition_is_recorded_at_its_heal_with_both_probes(tmp_path, network):
    cut = occurrence("partition", 0, 0.0, 1.0, None, {"groups": [["driver"], ["worker:1"]]})
    faults = _faults(tmp_path, network, cut)
    _run_to_end(faults)
    [fault] = _recorded(tmp_path)
    evidence = fault["evidence"]
    assert fault["fault_kind"] == "partition" and fault["applied"]
    assert evidence["before"]["received"] == 5 and evidence["during"]["received"] == 0
    assert evidence["healed"]["received"] == 5 and evidence["dropped"] >= 5
    assert evidence["healed_s"] >= 1.0 > fault["start_s"]
    assert not faults.unsettled()


def test_a_cut_that_did_not_cut_is_never_recorded(tmp_path, network, monkeypatch):
    real_cut = network_module.cut

    def cut_elsewhere(network, label, pairs, loss_percent=None):  # real rules that miss
        return real_cut(network, label, [("worker:1", "runner")], loss_percent)

    monkeypatch.setattr(network_module, "cut", cut_elsewhere)
    cut = occurrence("partition", 0, 0.0, 0.5, None, {"isolate": "worker:2"})
    _run_to_end(_faults(tmp_path, network, cut))
    assert _recorded(tmp_path) == []


def test_a_loss_is_recorded_when_its_rules_dropped_packets_and_a_stop_heals_it(tmp_path, network):
    lossy = occurrence("packet_loss", 1, 0.0, 60.0, "worker:1", {"percent": 100})
    faults = _faults(tmp_path, network, lossy)
    faults.start()
    deadline = time.monotonic() + 20
    while not faults.unsettled() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert faults.unsettled()  # cut, due to heal only in a minute
    faults.stop()  # the run ends first: healed now, and recorded
    [fault] = _recorded(tmp_path)
    assert fault["target"] == "worker:1" and fault["evidence"]["dropped"] >= 20
    assert fault["evidence"]["healed"]["received"] == 20


def test_a_link_latency_is_recorded_once_the_echoes_slowed_and_sped_up_again(tmp_path, network):
    slow = occurrence(
        "link_latency", 2, 0.0, 1.0, None, {"link": ["driver", "worker:2"], "delay_ms": 60}
    )
    _run_to_end(_faults(tmp_path, network, slow))
    [fault] = _recorded(tmp_path)
    evidence = fault["evidence"]
    assert fault["target"] == "driver<->worker:2" and fault["applied"]
    assert evidence["during"]["rtt_avg_ms"] >= 120  # both ways: twice the delay
    assert evidence["healed"]["rtt_avg_ms"] < 60 and evidence["dropped"] is None
    assert len(evidence["rules"]) == 2 and "NFQUEUE" in evidence["rules"][0]


def test_a_delay_whose_delayers_never_held_a_packet_is_never_recorded(
    tmp_path, network, monkeypatch
):
    from infra.hosts.delays import LinkDelay

    monkeypatch.setattr(LinkDelay, "start", lambda self: [])  # no rule queues a packet
    slow = occurrence("link_latency", 3, 0.0, 0.5, "worker:1", {"delay_ms": 80})
    _run_to_end(_faults(tmp_path, network, slow))
    assert _recorded(tmp_path) == []


def test_a_partition_pinned_to_a_seam_begins_at_the_driver_and_holds_it_until_the_heal(
    tmp_path, network
):
    from harness.faults.driver_faults import DriverFaults
    from harness.faults.fired import cut_healed

    params = {"groups": [["driver"], ["worker:1"]], "duration_s": 1.0, "point": "mid_commit"}
    pinned = occurrence("partition", 4, 0.0, 1.0, None, params)
    faults = _faults(tmp_path, network, pinned)
    assert not faults._due(pinned, now=60.0)  # due, but the driver is not at its seam
    driver = DriverFaults([pinned], faults.clock, faults.history, faults.fired)
    driver.coordinator_hook("after_commit", {})  # another seam: it goes on at once
    assert not faults.fired.fired(cut_healed(pinned.label))
    faults.start()
    driver.coordinator_hook("mid_commit", {"instant": "i1", "checkpoint_id": 3})  # held...
    assert faults.fired.fired(cut_healed(pinned.label))  # ...until the cut healed
    faults.stop()
    [fault] = _recorded(tmp_path)
    [reached] = [e for e in read_events(tmp_path / "history") if e["kind"] == "cut_reached"]
    assert reached["point"] == "mid_commit" and reached["checkpoint_id"] == 3
    assert fault["applied"] and fault["start_s"] >= reached["t"] - faults.clock.t0
    assert fault["evidence"]["during"]["received"] == 0
    assert fault["evidence"]["healed_s"] >= fault["start_s"] + 1.0  # duration_s after the cut


def test_the_pairs_a_fault_drops():
    one_way = occurrence(
        "partition", 0, 0, 1, None, {"groups": [["driver"], ["worker:1", "s3"]], "one_way": True}
    )
    assert fault_pairs(one_way.fault, HOSTS) == [("driver", "worker:1"), ("driver", "s3")]
    isolated = occurrence("partition", 0, 0, 1, None, {"isolate": "runner"})
    pairs = fault_pairs(isolated.fault, ["runner", "driver", "master"])
    assert sorted(pairs) == sorted(
        [("runner", "driver"), ("runner", "master"), ("driver", "runner"), ("master", "runner")]
    )
    link = occurrence("packet_loss", 0, 0, 1, None, {"link": ["driver", "s3"], "percent": 5})
    assert fault_pairs(link.fault, HOSTS) == [("driver", "s3"), ("s3", "driver")]
