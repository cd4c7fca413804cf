"""Network faults in scenario files: they name hosts the run has, act only on the hosts
backend, and a bad entry is refused with the key, the value and what is allowed."""

from pathlib import Path

import pytest

from harness.scenario import ScenarioError, load_scenario

SHIPPED = Path(__file__).resolve().parents[3] / "scenarios" / "network"


def _load(tmp_path: Path, text: str, backend: str = "hosts"):
    path = tmp_path / "n.yaml"
    path.write_text(f"name: n\ncluster: {{backend: {backend}, workers: 2}}\nduration_s: 40\n{text}")
    return load_scenario(path)


def test_the_shipped_network_scenarios_load():
    for path in sorted(SHIPPED.glob("*.yaml")):
        scenario = load_scenario(path)
        assert scenario.cluster.backend == "hosts"
        assert {f.kind for f in scenario.faults} <= {"partition", "link_latency", "packet_loss"}


def test_faults_that_name_the_run_s_hosts_load(tmp_path):
    scenario = _load(
        tmp_path,
        "table: {storage: {kind: s3, endpoint: local, bucket: bkt}}\n"
        "faults:\n"
        "  - {kind: partition, at_s: 5, groups: [[driver], [worker:1, worker:2]], one_way: true}\n"
        "  - {kind: partition, at_s: 5, isolate: s3, duration_s: 3}\n"
        "  - {kind: packet_loss, at_s: 9, link: [driver, s3], percent: 20}\n"
        "  - {kind: packet_loss, at_s: 9, target: worker:2, percent: 100}\n"
        "  - {kind: link_latency, at_s: 9, link: [driver, s3], delay_ms: 300, jitter_ms: 50}\n",
    )
    kinds = [f.kind for f in scenario.faults]
    assert kinds == ["partition"] * 2 + ["packet_loss"] * 2 + ["link_latency"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "faults: [{kind: partition, at_s: 5, isolate: driver}]  # standalone",
            "partition cannot be applied on cluster.backend 'standalone'; allowed backends: hosts",
        ),
        (
            "faults: [{kind: partition, at_s: 5, isolate: driver, groups: [[driver], [master]]}]",
            "give either groups or isolate",
        ),
        (
            "faults: [{kind: partition, at_s: 5, groups: [[driver, master], [master]]}]",
            "a host may be in one group only",
        ),
        (
            "faults: [{kind: partition, at_s: 5, groups: [[driver], [worker:3]]}]",
            "faults.0.groups: this run has no host 'worker:3'; allowed: runner, driver, master, "
            "worker:1, worker:2",
        ),
        (
            "faults: [{kind: packet_loss, at_s: 5, link: [driver, zookeeper], percent: 5}]",
            "faults.0.link: this run has no host 'zookeeper'",
        ),
        (
            "faults: [{kind: packet_loss, at_s: 5, link: [driver, s3], target: s3, percent: 5}]",
            "give either link or target",
        ),
        (
            "faults: [{kind: packet_loss, at_s: 5, target: executor, percent: 5}]",
            "'executor' is not a valid target; allowed: host",
        ),
        (
            "faults: [{kind: packet_loss, at_s: 5, target: driver, percent: 0}]",
            "percent",
        ),
        (
            "faults: [{kind: link_latency, at_s: 5, target: driver, delay_ms: 5, jitter_ms: 9}]",
            "jitter_ms may be at most delay_ms",
        ),
        (
            "faults: [{kind: partition, at_s: 5, isolate: worker:1, point: mid_commit}]",
            "point is a seam of the driver's coordinator: cut the driver",
        ),
        (
            "faults: [{kind: partition, at_s: 5, isolate: driver, point: mid_flush}]",
            "faults.0.point",
        ),
        (
            "table: {storage: {kind: s3, endpoint: 'http://store.example:9000', bucket: bkt}}",
            "table.storage.endpoint: cluster.backend hosts reaches nothing outside",
        ),
    ],
)
def test_a_bad_network_fault_is_refused_by_name(tmp_path, text, says):
    backend = "standalone" if "# standalone" in text else "hosts"
    with pytest.raises(ScenarioError) as caught:
        _load(tmp_path, text, backend)
    assert says in str(caught.value), str(caught.value)
