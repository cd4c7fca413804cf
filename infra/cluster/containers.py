"""Spark in containers (docker SDK for Python): a master and N worker containers, host
networking, each binding its own loopback address; only the work dir and the given mounts
(the run and table directories) are bound, at the same absolute paths. Containers carry
labels, so down() finds and removes everything a cluster started, even after a crash."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.cluster.base import ClusterBackend
from infra.cluster.clocks import FAKETIME_LIB, faketime_env
from infra.cluster.info import CLUSTER_ENV, OWNER_ENV, ClusterError, ClusterInfo, WorkerInfo

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

LABEL = "instantbench.cluster"  # = cluster id; every container of a cluster has it
LABEL_ROLE = "instantbench.role"  # master | worker
LABEL_WORKER = "instantbench.worker"  # N
LABEL_OWNER = "instantbench.owner_pid"  # the process that started it ("" by hand)
SPARK_CLASS = "/opt/venv/bin/spark-class"
PAUSE_TRIES, PAUSE_RETRY_S = 15, 0.2  # docker pause, tried again for about 3 s


def pyspark_version(spark_home: Path) -> str:
    """The version of the pyspark package at `spark_home` (its version.py), unimported."""
    text = (Path(spark_home) / "version.py").read_text()
    match = re.search(r"__version__[^=]*=\s*[\"']([^\"']+)[\"']", text)
    if match is None:
        raise ClusterError(f"{spark_home}/version.py names no pyspark version")
    return match.group(1)


def docker_client() -> DockerClient:
    """A docker client, or a ClusterError that says how to get an engine."""
    try:
        import docker
    except ImportError:
        raise ClusterError("the docker backend needs the docker SDK: pip install docker") from None
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception as exc:
        raise ClusterError(
            f"no docker engine answers ({exc}); start one: infra/docker/ensure_dockerd.sh"
        ) from None
    return client


def docker_available() -> tuple[bool, str]:
    """(True, "") when a docker engine answers, else (False, why)."""
    try:
        docker_client().close()
    except ClusterError as exc:
        return False, str(exc)
    return True, ""


class DockerBackend(ClusterBackend):
    name = "docker"

    def __init__(
        self,
        *args: Any,
        image: str | None = None,
        build_image: bool = True,
        python: str | None = None,
        spark_home: Path | None = None,
        **kwargs: Any,
    ) -> None:
        """`python` and `spark_home`: another Spark runtime's on the host (a system under
        test on a Spark line of its own): the containers run the image's venv of the same
        pyspark version (infra/docker/image.py RUNTIME_PYSPARK), the driver's wrapper
        `python`."""
        super().__init__(*args, **kwargs)
        self._image = image
        self.host_python = python or sys.executable
        self.runtime = pyspark_version(spark_home) if spark_home is not None else None
        # Build the image for the project's current code when it is missing (build_image.sh:
        # seconds when only the code changed, a few minutes from nothing).
        self.build_image = build_image and image is None
        self._client: DockerClient | None = None

    # --- docker ------------------------------------------------------------------------
    @property
    def client(self) -> DockerClient:
        if self._client is None:
            self._client = docker_client()
        return self._client

    @property
    def image(self) -> str:
        if self._image is None:
            from infra.docker.image import image_tag

            self._image = image_tag()
        return self._image

    def executor_python(self) -> str:
        from infra.docker.image import PYTHON_COMMAND, runtime_python_command

        return runtime_python_command(self.runtime) if self.runtime else PYTHON_COMMAND

    @property
    def spark_class(self) -> str:
        return f"{self.spark_home}/bin/spark-class" if self.spark_home else SPARK_CLASS

    @property
    def spark_home(self) -> str | None:
        """SPARK_HOME of the containers for another runtime (None: the image's own)."""
        from infra.docker.image import runtime_spark_home

        return runtime_spark_home(self.runtime) if self.runtime else None

    def driver_env(self) -> dict[str, str]:
        """PySpark ships the driver's PYSPARK_PYTHON to executors as the command to run,
        and runs it on the driver too (Python data sources). A command name serves both:
        in the image it is the venv's python; for the driver, a wrapper around this
        interpreter in <work_dir>/bin, put first on the driver's PATH."""
        command = self.executor_python()
        bindir = self.work_dir / "bin"
        bindir.mkdir(parents=True, exist_ok=True)
        wrapper = bindir / command
        wrapper.write_text(f'#!/bin/sh\nexec "{self.host_python}" "$@"\n')
        wrapper.chmod(0o755)
        path = os.environ.get("PATH", "/usr/bin:/bin")
        return {"PYSPARK_PYTHON": command, "PATH": f"{bindir}:{path}"}

    def _preflight(self) -> None:
        import docker.errors

        try:
            self.client.images.get(self.image)
            return
        except docker.errors.ImageNotFound:
            if not self.build_image:
                raise ClusterError(
                    f"docker image {self.image} is not built (it matches the project's "
                    f"current code); build it with infra/docker/build_image.sh"
                ) from None
        from infra.docker.image import ensure_image

        log = self.log_dir / "image-build.log"
        try:
            self._image = ensure_image(log)
        except Exception as exc:
            raise ClusterError(
                f"could not build the docker image {self.image} ({exc}); see {log}"
            ) from None

    def _volumes(self) -> dict[str, dict[str, str]]:
        """The work dir and the mounts at their own paths; none inside another."""
        paths = sorted({self.work_dir, *self.mounts})
        outer = [p for p in paths if not any(q != p and p.is_relative_to(q) for q in paths)]
        return {str(p): {"bind": str(p), "mode": "rw"} for p in outer}

    def _run(
        self,
        name: str,
        role: str,
        host: str,
        args: list[str],
        env: dict[str, str],
        extra_labels: dict[str, str] | None = None,
    ) -> Container:
        labels = {
            LABEL: self.cluster_id,
            LABEL_ROLE: role,
            LABEL_OWNER: str(os.getpid()) if self.owned else "",
            "instantbench.work_dir": str(self.work_dir),
            **(extra_labels or {}),
        }
        environment = {
            "SPARK_LOCAL_IP": host,
            "SPARK_DAEMON_MEMORY": "512m",
            "PYSPARK_PYTHON": self.executor_python(),
            "PATH": "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/tmp",
            CLUSTER_ENV: self.cluster_id,
            OWNER_ENV: labels[LABEL_OWNER],
            **({"SPARK_HOME": self.spark_home} if self.spark_home else {}),
            **env,
        }
        return self.client.containers.run(
            self.image,
            [self.spark_class, *args],
            name=name,
            detach=True,
            network_mode="host",  # loopback addresses only; no bridge, no published ports
            environment=environment,
            volumes=self._volumes(),
            labels=labels,
            user=f"{os.getuid()}:{os.getgid()}",
            privileged=False,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            init=True,  # reaps the executor's Python workers, forwards signals
            working_dir="/tmp",
        )

    def _container_name(self, role: str) -> str:
        return f"instantbench-{self.cluster_id}-{role}"

    def _start_master(self, info: ClusterInfo) -> None:
        args = self._master_args("org.apache.spark.deploy.master.Master")
        master = self._run(self._container_name("master"), "master", self.master_host, args, {})
        master.reload()
        info.image = self.image
        info.master_container = master.id
        info.master_pid = master.attrs["State"].get("Pid") or None

    def _start_worker(self, n: int) -> WorkerInfo:
        host = self.worker_host(n)
        wdir = self.work_dir / f"worker-{n}"
        wdir.mkdir(parents=True, exist_ok=True)
        env = {"SPARK_WORKER_DIR": str(wdir)}
        offset = self._worker_clock_offset(n)
        if offset is not None:
            # The image installs Debian's faketime: the library sits at the host's path.
            env.update(faketime_env(self.clock_file(n), FAKETIME_LIB, self.clock_skip_java))
        args = self._worker_args(host, wdir)
        name = self._container_name(f"worker-{n}")
        self._remove_named(name)
        c = self._run(name, "worker", host, args, env, {LABEL_WORKER: str(n)})
        c.reload()
        return WorkerInfo(
            index=n,
            host=host,
            pid=c.attrs["State"].get("Pid") or None,
            container=c.id,
            name=name,
            clock_offset_ms=offset,
        )

    def _remove_named(self, name: str) -> None:
        import docker.errors

        try:
            old = self.client.containers.get(name)
        except docker.errors.NotFound:
            return
        self._save_logs(old)
        old.remove(force=True)

    def _container(self, ref: str | None) -> Container | None:
        import docker.errors

        if ref is None:
            return None
        try:
            return self.client.containers.get(ref)
        except docker.errors.NotFound:
            return None

    def _save_logs(self, c: Container) -> None:
        """Keep a container's output in the work dir's logs/ before it is removed."""
        role = c.labels.get(LABEL_ROLE, "container")
        n = c.labels.get(LABEL_WORKER)
        path = self._master_log() if role == "master" else self._worker_log(int(n or 0))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "ab") as out:
                out.write(f"--- container {c.name} ({c.short_id}) ---\n".encode())
                out.write(c.logs(stdout=True, stderr=True))
        except Exception:
            pass

    # --- the interface -----------------------------------------------------------------
    def down(self) -> None:
        with self._lock:
            self.info = None
            try:
                client = self.client
            except ClusterError:
                return  # no engine: no container of ours can be running
            mine = {"label": f"{LABEL}={self.cluster_id}"}
            for c in client.containers.list(all=True, filters=mine):
                self._save_logs(c)
                try:
                    c.remove(force=True)
                except Exception as exc:
                    if "No such container" not in str(exc):
                        raise

    def _worker_container(self, n: int) -> tuple[WorkerInfo, Container]:
        w = self.require_info().worker(n)
        c = self._container(w.container)
        if c is None:
            raise ClusterError(f"worker:{n}: its container is gone")
        return w, c

    def kill_worker(self, n: int) -> None:
        with self._lock:
            w, c = self._worker_container(n)
            c.reload()
            if c.status == "paused":
                c.unpause()
            if c.status in ("running", "paused", "restarting"):
                c.kill()  # SIGKILL to the container's init: everything in it dies
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                c.reload()
                if c.status not in ("running", "paused"):
                    break
                time.sleep(0.1)
            w.state = "killed"

    def pause_worker(self, n: int) -> None:
        """docker pause: the freezer cgroup stops every process of the container. It cannot
        freeze while one of them sleeps uninterruptibly (in I/O), and docker then answers
        "unable to freeze": a moment later it can, so it is tried again for a few seconds;
        then a ClusterError names the container (the run ends unknown, the fault unapplied)."""
        import docker.errors

        with self._lock:
            w, c = self._worker_container(n)
            for attempt in range(PAUSE_TRIES):
                try:
                    c.pause()
                    break
                except docker.errors.APIError as exc:
                    if attempt == PAUSE_TRIES - 1:
                        raise ClusterError(
                            f"worker:{n}: docker could not pause its container {c.short_id}"
                            f" in {PAUSE_TRIES} tries: {exc.explanation}"
                        ) from None
                    time.sleep(PAUSE_RETRY_S)
            w.state = "paused"

    def resume_worker(self, n: int) -> None:
        with self._lock:
            w, c = self._worker_container(n)
            c.unpause()
            w.state = "running"

    def container_status(self, n: int) -> str | None:
        """running | paused | exited | ... (docker's word), None when it is gone."""
        c = self._container(self.require_info().worker(n).container)
        return None if c is None else c.status

    def _worker_status(self, w: WorkerInfo) -> dict[str, Any]:
        c = self._container(w.container)
        status = None if c is None else c.status
        return {"alive": status in ("running", "paused", "created"), "container_status": status}

    def _master_alive(self) -> bool:
        info = self.info
        if info is None:
            return False
        c = self._container(info.master_container)
        return c is not None and c.status in ("running", "created")

    @classmethod
    def attach(cls, info: ClusterInfo, **kwargs: Any) -> DockerBackend:
        return super().attach(info, image=info.image, **kwargs)  # type: ignore[return-value]


def remove_all(owner_dead_only: bool = False) -> list[str]:
    """Remove every container any instantbench cluster started (or only those whose
    owning process is gone). Returns their names."""
    client = docker_client()
    removed = []
    for c in client.containers.list(all=True, filters={"label": LABEL}):
        owner = c.labels.get(LABEL_OWNER, "")
        if owner_dead_only and (not owner or Path(f"/proc/{owner}").exists()):
            continue
        c.remove(force=True)
        removed.append(c.name)
    return removed
