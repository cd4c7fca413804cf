"""A run's hosts are real network namespaces: each host reaches the others over the run's
bridge and nothing outside it; everything goes when the network goes, and a network whose
owner was SIGKILLed is removed by the next one. Needs root, iproute2, nftables and ping
(.ci/run installs them)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from infra.hosts import HostNetwork, HostsError, host_address
from infra.hosts.enter import current_namespace, inside
from infra.hosts.iproute import existing_namespaces, namespace_pids
from infra.hosts.links import cut, dropped, heal
from infra.hosts.network import STATE_DIR
from infra.hosts.probe import probe
from infra.hosts.reap import reap_networks


@pytest.fixture
def network():
    with HostNetwork(["runner", "driver", "worker:1", "worker:2"]) as net:
        yield net


def _echoes(net: HostNetwork, source: str, target: str, count: int = 3) -> int:
    return probe(net.namespace(source), source, target, net.address(target), count).received


def test_each_host_reaches_the_others_and_nothing_outside(network):
    assert network.address("worker:2") == host_address("worker:2") == "10.77.0.12"
    for source, target in [("runner", "worker:1"), ("driver", "worker:2"), ("worker:2", "runner")]:
        assert _echoes(network, source, target) == 3
    routes = subprocess.run(
        [*network.launcher("driver"), "ip", "-4", "route"], capture_output=True, text=True
    ).stdout.splitlines()
    subnet = f"10.77.0.0/24 dev eth0 proto kernel scope link src {network.address('driver')}"
    assert [r.strip() for r in routes] == [subnet]
    # This machine's loopback is not the host's: a server listening here is not reached.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with inside(network.namespace("runner")), pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        with inside(network.namespace("runner")), pytest.raises(OSError):
            socket.create_connection(("192.0.2.1", 80), timeout=1).close()  # no route out


def test_inside_moves_only_this_thread_and_comes_back(network):
    home = current_namespace()
    seen: list[str] = []
    with pytest.raises(RuntimeError), inside(network.namespace("driver")):
        assert current_namespace() != home
        thread = threading.Thread(target=lambda: seen.append(current_namespace()))
        thread.start()
        thread.join()
        raise RuntimeError("the block fails")
    assert current_namespace() == home
    assert seen and seen[0] != home  # a thread started inside is inside
    with pytest.raises(HostsError, match="no network namespace"), inside("ib-none-such"):
        pass


def test_down_kills_what_runs_on_the_hosts_and_removes_every_namespace():
    net = HostNetwork(["runner", "worker:1"]).up()
    sleeper = subprocess.Popen([*net.launcher("worker:1"), "sleep", "600"])
    assert namespace_pids(net.namespace("worker:1")) == [sleeper.pid]
    assert net.state_path.exists()
    net.down()
    assert sleeper.wait(5) == -signal.SIGKILL
    assert existing_namespaces(f"ib-{net.network_id}-") == []
    assert not net.state_path.exists()
    net.down()  # idempotent


def test_a_network_whose_owner_was_killed_is_removed_by_the_next_reap(tmp_path):
    script = (
        "from infra.hosts import HostNetwork; import time; "
        "n = HostNetwork(['runner', 'worker:1']).up(); print(n.network_id, flush=True); "
        "time.sleep(600)"
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    network_id = owner.stdout.readline().strip()
    state = json.loads((STATE_DIR / f"{network_id}.json").read_text())
    assert state["owner_pid"] == owner.pid
    assert network_id not in " ".join(reap_networks())  # its owner lives: left alone
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    reap_networks()  # (or a hosts run's beside this test, which reaps first: the same end)
    assert existing_namespaces(f"ib-{network_id}-") == []
    assert not (STATE_DIR / f"{network_id}.json").exists()


def test_a_network_made_while_a_reap_runs_is_left_alone(monkeypatch):
    """The race forced: a network is made between the reaper's two looks (its list of our
    namespaces, its read of the descriptions); it must not look orphaned."""
    from infra.hosts import reap

    made: list[HostNetwork] = []
    listed = reap.existing_namespaces

    def a_new_network_then_the_listing(prefix: str) -> list[str]:
        if prefix == reap.NAMESPACE_PREFIX and not made:
            made.append(HostNetwork(["runner", "worker:1"]).up())
        return listed(prefix)

    monkeypatch.setattr(reap, "existing_namespaces", a_new_network_then_the_listing)
    try:
        reap.reap_networks()
        [network] = made
        assert len(existing_namespaces(f"ib-{network.network_id}-")) == 3  # hub + 2 hosts
        assert network.state_path.exists()
    finally:
        for network in made:
            network.down()


def test_a_cut_drops_what_it_names_and_heals(network):
    pairs = [("driver", "worker:1")]  # one way: the driver's packets to worker:1
    rules = cut(network, "partition#0", pairs)
    assert rules == ["ip saddr 10.77.0.3 ip daddr 10.77.0.11 counter packets 0 bytes 0 drop"]
    assert _echoes(network, "driver", "worker:1") == 0
    assert _echoes(network, "worker:1", "driver") == 0  # its echo requests pass, the replies not
    assert _echoes(network, "driver", "worker:2") == 3  # other links keep working
    assert dropped(network, "partition#0") >= 3
    heal(network, "partition#0")
    assert _echoes(network, "driver", "worker:1") == 3


def test_a_loss_rule_drops_about_its_share(network):
    cut(network, "packet_loss#0", [("runner", "worker:2")], loss_percent=50)
    received = _echoes(network, "runner", "worker:2", count=40)
    assert 5 <= received <= 35  # P(outside) < 1e-6 at 50 %
    assert dropped(network, "packet_loss#0") == 40 - received
    cut(network, "packet_loss#1", [("runner", "worker:1")], loss_percent=100)  # overlapping
    assert _echoes(network, "runner", "worker:1") == 0
    heal(network, "packet_loss#0")
    assert _echoes(network, "runner", "worker:2", count=5) == 5
    assert _echoes(network, "runner", "worker:1") == 0  # the other fault still holds


def test_names_and_addresses_are_checked():
    with pytest.raises(HostsError, match="no host 'worker:0'"):
        HostNetwork(["worker:0"])
    with pytest.raises(HostsError, match="twice"):
        HostNetwork(["runner", "runner"])
    with pytest.raises(HostsError, match="no host 'master' in this network"):
        HostNetwork(["runner"]).address("master")
    assert os.geteuid() == 0  # namespaces need root: CI runs as root


def test_a_delay_holds_packets_and_a_dead_delayer_never_cuts_the_link(network):
    from infra.hosts.delays import LinkDelay

    delay = LinkDelay(network, "link_latency#9", 9, [("runner", "worker:1")], 50)
    [rule] = delay.start()
    assert "-d 10.77.0.11/32" in rule and "--queue-num 9 --queue-bypass" in rule
    slowed = probe(network.namespace("runner"), "runner", "worker:1", "10.77.0.11", 3)
    assert slowed.received == 3 and slowed.rtt_avg_ms >= 50  # one way delayed: >= 50 ms
    for delayer in delay._delayers.values():
        delayer.kill()  # with no one on the queue, the rule lets packets by
        delayer.wait()
    bypassed = probe(network.namespace("runner"), "runner", "worker:1", "10.77.0.11", 3)
    assert bypassed.received == 3 and bypassed.rtt_avg_ms < 50
    delay.stop()
    assert delay.rules() == []
