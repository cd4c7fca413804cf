"""Leftovers of clusters whose owning run died (a SIGKILL of the runner, a crash)."""

from __future__ import annotations

from pathlib import Path

from infra.cluster.info import CLUSTER_ENV, OWNER_ENV


def reap_orphans(backend: str | None = None) -> list[str]:
    """Kill processes / remove containers of clusters whose owning process (a run) is
    gone, e.g. after a SIGKILL of the runner. Clusters started by hand are left alone.
    Returns what it removed."""
    removed: list[str] = []
    if backend in (None, "standalone", "hosts"):
        from infra.cluster.procs import pids_with_env, proc_env, terminate

        victims = []
        for pid in pids_with_env(CLUSTER_ENV):
            owner = proc_env(pid).get(OWNER_ENV, "")
            if owner and not Path(f"/proc/{owner}").exists():
                victims.append(pid)
        terminate(victims)
        removed += [f"pid {p}" for p in victims]
    if backend in (None, "hosts"):
        from infra.hosts.reap import reap_networks

        removed += [f"namespace {ns}" for ns in reap_networks()]
    if backend in (None, "docker"):
        from infra.cluster.containers import docker_available, remove_all

        if docker_available()[0]:
            removed += remove_all(owner_dead_only=True)
    return removed
