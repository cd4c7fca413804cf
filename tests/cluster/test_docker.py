"""Docker backend: master and worker containers (host networking, own loopback address
each), the image built offline by infra/docker/build_image.sh (reused when built)."""

from __future__ import annotations

import subprocess
import time

import pytest
from cluster_helpers import docker_answers, lane_master, lane_worker, run_job

from infra.cluster import backend_for, master_json
from infra.cluster.master_ui import alive_worker_hosts

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def image(tmp_path_factory, prerequisite):
    ok, why = docker_answers()
    prerequisite(
        ok, f"`docker info` fails, no docker engine (infra/docker/ensure_dockerd.sh): {why}"
    )
    from infra.docker.image import ensure_image

    log = tmp_path_factory.mktemp("image") / "build.log"
    return ensure_image(log)  # seconds when only the project's code changed


def _containers(cluster_id: str) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-a", "-q", "--filter", f"label=instantbench.cluster={cluster_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def _wait(predicate, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def test_docker_cluster_runs_a_job_and_takes_worker_faults(tmp_path, image):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    cluster = backend_for(
        "docker",
        2,
        1,
        run_dir / "cluster",
        master_host=lane_master(),
        mounts=[run_dir],
        clock_control=True,
        image=image,
    )
    with cluster:
        info = cluster.info
        hosts = [lane_worker(1), lane_worker(2)]
        assert [w.host for w in info.workers] == hosts
        assert alive_worker_hosts(master_json(info.web_url)) == hosts
        assert len(_containers(cluster.cluster_id)) == 3

        # Containers: unprivileged, host network, only the run directory mounted.
        import docker

        client = docker.from_env()
        for cid in [info.master_container, *(w.container for w in info.workers)]:
            attrs = client.containers.get(cid).attrs
            host_config = attrs["HostConfig"]
            assert host_config["NetworkMode"] == "host"
            assert host_config["Privileged"] is False
            assert [m["Source"] for m in attrs["Mounts"]] == [str(run_dir)]
        client.close()

        # A real job from a driver on the host; worker 2's clock runs 5 s ahead.
        cluster.set_worker_clock(2, 5000)
        time.sleep(1.5)
        answer = run_job(cluster)
        rows = answer["rows"]
        assert sorted(r["id"] for r in rows) == list(range(8))
        assert {r["host"] for r in rows} <= set(hosts)
        assert {r["python"] for r in rows} == {"/opt/venv/bin/instantbench-python"}
        for r in rows:
            skew = r["wall_minus_mono"] - answer["base"]
            want = 5.0 if r["host"] == lane_worker(2) else 0.0
            assert abs(skew - want) < 0.5, (r, skew)

        cluster.pause_worker(1)
        assert cluster.container_status(1) == "paused"
        cluster.resume_worker(1)
        assert cluster.container_status(1) == "running"

        cluster.kill_worker(2)
        assert cluster.container_status(2) == "exited"
        assert _wait(lambda: alive_worker_hosts(master_json(info.web_url)) == hosts[:1], 30)

        cluster.restart_worker(2, clock_offset_ms=0)
        assert alive_worker_hosts(master_json(info.web_url)) == hosts
        assert cluster.container_status(2) == "running"
    # down(): no container of this cluster is left (their logs are kept).
    assert _containers(cluster.cluster_id) == []
    assert (run_dir / "cluster" / "logs" / "worker-2.log").stat().st_size > 0
    cluster.down()  # idempotent
