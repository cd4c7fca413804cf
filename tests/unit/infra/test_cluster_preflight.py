"""A cluster's start-up order, without a docker engine: the image build that the docker
backend's preflight may run logs into the cluster's log directory, which must exist by
then; a failed build is a ClusterError naming the image and the log."""

from pathlib import Path

import docker.errors
import pytest

import infra.docker.image
from infra.cluster.containers import DockerBackend
from infra.cluster.info import ClusterError


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


def test_a_standalone_cluster_runs_the_spark_home_and_python_it_is_given(tmp_path):
    """A system on a Spark line of its own (Hudi's 3.5 runtime) gets daemons, executors
    and Python workers of that line, not the project's pyspark."""
    from infra.cluster.standalone import StandaloneBackend, spark_home

    home, python = tmp_path / "pyspark-3.5", str(tmp_path / "venv" / "bin" / "python")
    backend = StandaloneBackend(2, 1, tmp_path / "cluster", python=python, spark_home=home)
    assert backend.spark_class == home / "bin" / "spark-class"
    env = backend._env("127.0.0.11")
    assert (env["SPARK_HOME"], env["PYSPARK_PYTHON"]) == (str(home), python)
    assert backend.spark_conf()["spark.pyspark.python"] == python
    with pytest.raises(ClusterError, match=r"pyspark-3\.5/bin/spark-class is missing"):
        backend._preflight()
    default = StandaloneBackend(2, 1, tmp_path / "cluster")
    assert default.spark_class == spark_home() / "bin" / "spark-class"


def test_a_docker_cluster_runs_the_image_s_venv_of_the_runtime_it_is_given(tmp_path):
    """Hudi's runtime on the host (pyspark 3.5.9) -> the image's venv of the same version
    (infra/docker/Dockerfile builds one per RUNTIME_PYSPARK), and a driver wrapper of the
    same command name around the host runtime's python."""
    import harness.systems.hudi.runtime as hudi_runtime
    from infra.docker.image import RUNTIME_PYSPARK

    home = tmp_path / "site-packages" / "pyspark"
    home.mkdir(parents=True)
    (home / "version.py").write_text("__version__: str = '3.5.9'\n")
    python = str(tmp_path / "venv" / "bin" / "python")
    backend = DockerBackend(2, 1, tmp_path / "cluster", python=python, spark_home=home)
    assert backend.spark_home == "/opt/runtimes/pyspark-3.5.9/spark-home"
    assert backend.spark_class == "/opt/runtimes/pyspark-3.5.9/spark-home/bin/spark-class"
    assert backend.executor_python() == "instantbench-python-3.5.9"
    env = backend.driver_env()
    wrapper = Path(env["PATH"].split(":")[0]) / "instantbench-python-3.5.9"
    assert env["PYSPARK_PYTHON"] == "instantbench-python-3.5.9"
    assert python in wrapper.read_text()
    assert DockerBackend(2, 1, tmp_path / "c2").spark_class == "/opt/venv/bin/spark-class"
    # every system's Spark runtime has its venv in the image
    wanted = {spec.pyspark for spec in hudi_runtime.HUDI_RUNTIMES.values()}
    assert wanted <= set(RUNTIME_PYSPARK)
