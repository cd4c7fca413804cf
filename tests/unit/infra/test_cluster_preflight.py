"""A cluster's start-up order, without a docker engine: the image build that the docker
backend's preflight may run logs into the cluster's log directory, which must exist by
then; a failed build is a ClusterError naming the image and the log."""

from pathlib import Path

import docker.errors
import pytest

import infra.docker.image
from infra.cluster.base import ClusterError
from infra.cluster.containers import DockerBackend


class _Images:
    def get(self, name):
        raise docker.errors.ImageNotFound(name)


class _Client:
    images = _Images()


def test_a_missing_image_is_built_with_its_log_in_an_existing_log_dir(tmp_path, monkeypatch):
    seen: list[Path] = []

    def ensure_image(log: Path) -> str:
        seen.append(log)
        with open(log, "ab") as out:  # what the real build does first
            out.write(b"building\n")
        raise RuntimeError("no base image")

    monkeypatch.setattr(infra.docker.image, "ensure_image", ensure_image)
    backend = DockerBackend(
        1, 1, tmp_path / "cluster", image=None, master_host="127.0.0.91", master_port=17077
    )
    backend._client = _Client()
    with pytest.raises(ClusterError, match=r"could not build the docker image .*no base image"):
        backend.up()
    assert seen and seen[0].read_text() == "building\n"
    assert backend.info is None
