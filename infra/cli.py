"""`instantbench cluster up|down|status`: a cluster started by hand, outliving the command.

`up` writes a state file (default ~/.instantbench/cluster-<backend>.json, or under
$INSTANTBENCH_HOME) so that `down` and `status` find what `up` started. The harness's CLI
calls these functions; they print nothing themselves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from infra.cluster import BACKENDS, ClusterError, ClusterInfo, attach, backend_for
from infra.cluster.addresses import MASTER_HOST
from infra.cluster.reap import reap_orphans


def state_dir() -> Path:
    return Path(os.environ.get("INSTANTBENCH_HOME", Path.home() / ".instantbench"))


def state_path(backend: str, directory: Path | None = None) -> Path:
    _check_backend(backend)
    return (directory or state_dir()) / f"cluster-{backend}.json"


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ClusterError(f"unknown cluster backend {backend!r}; allowed: {', '.join(BACKENDS)}")


def load_state(backend: str, directory: Path | None = None) -> ClusterInfo | None:
    path = state_path(backend, directory)
    try:
        return ClusterInfo.from_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        raise ClusterError(f"{path}: unreadable cluster state ({exc}); remove it") from None


def _save_state(info: ClusterInfo, directory: Path | None) -> Path:
    path = state_path(info.backend, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds the secret
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(info.to_dict(), indent=2))
    os.replace(tmp, path)
    return path


def cluster_up(
    backend: str,
    workers: int = 2,
    cores_per_worker: int = 1,
    work_dir: Path | None = None,
    mounts: list[Path] | None = None,
    master_host: str = MASTER_HOST,
    clock_control: bool = False,
    directory: Path | None = None,
) -> ClusterInfo:
    """Start a cluster that keeps running after this process exits; returns its info
    (master_url is what `--master`/a run needs). Fails if one is already recorded and up.
    work_dir: logs and worker dirs (default <state dir>/cluster-<backend>/). docker:
    mounts are the directories containers may write (the runs' --out directory)."""
    _check_backend(backend)
    old = load_state(backend, directory)
    if old is not None:
        status = attach(old).status()
        if status["master"] == "ALIVE":
            raise ClusterError(
                f"a {backend} cluster is already up ({old.master_url}, id {old.cluster_id}); "
                f"`instantbench cluster down --backend {backend}` first"
            )
        attach(old).down()  # a dead or half-dead one: clean it up first
        state_path(backend, directory).unlink(missing_ok=True)
    work_dir = Path(work_dir or (directory or state_dir()) / f"cluster-{backend}").resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    cluster = backend_for(
        backend,
        workers,
        cores_per_worker,
        work_dir,
        mounts=list(mounts or []),
        master_host=master_host,
        clock_control=clock_control,
        owned=False,
    )
    info = cluster.up()  # tears down what it started if it fails
    try:
        _save_state(info, directory)
    except BaseException:
        cluster.down()
        raise
    return info


def cluster_down(backend: str, directory: Path | None = None) -> ClusterInfo | None:
    """Stop the recorded cluster and remove its state file; also removes leftovers of
    clusters whose owning run died (processes / containers carrying our markers).
    Returns the info of the cluster it stopped (None: none was recorded)."""
    info = load_state(backend, directory)
    if info is not None:
        attach(info).down()
        state_path(backend, directory).unlink(missing_ok=True)
    reap_orphans(backend)
    return info


def cluster_status(backend: str, directory: Path | None = None) -> dict[str, Any]:
    """{"up": bool, "state_file": str, ...backend status (master, workers...)}."""
    info = load_state(backend, directory)
    path = str(state_path(backend, directory))
    if info is None:
        return {"up": False, "backend": backend, "state_file": path}
    status = attach(info).status()
    return {"up": status["master"] == "ALIVE", "state_file": path, **status}


def format_status(status: dict[str, Any]) -> str:
    """Human-readable lines for `instantbench cluster status`."""
    if "master_url" not in status:
        return f"no {status['backend']} cluster recorded ({status['state_file']})"
    lines = [
        f"{status['backend']} cluster {status['cluster_id']}: master {status['master_url']} "
        f"{status['master']}, {status['alive_workers']}/{len(status['workers'])} workers alive",
        f"  web UI {status['web_url']}, work dir {status['work_dir']}",
    ]
    for w in status["workers"]:
        where = w.get("name") or f"pid {w.get('pid')}"
        state = w.get("container_status") or w.get("process_state")
        lines.append(
            f"  worker:{w['index']} {w['host']} {where} ({state}) "
            f"{'registered' if w['registered'] else 'not registered'}"
        )
    network = status.get("network")
    for host, seen in (network or {}).get("hosts", {}).items():
        there = "up" if seen["exists"] else "gone"
        lines.append(f"  host {host} {seen['address']} ({seen['namespace']}, {there})")
    return "\n".join(lines)


__all__ = [
    "cluster_down",
    "cluster_status",
    "cluster_up",
    "format_status",
    "load_state",
    "reap_orphans",
    "state_path",
]
