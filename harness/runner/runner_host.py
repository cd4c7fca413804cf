"""A hosts run's runner, in a process of its own born on the runner host.

The process that makes the network (its owner, which removes it however the run ends)
stays on this machine's network; the run itself (its table store, readers, batch writers,
checks, fault threads) runs in a child started from inside the runner's namespace, so
every thread it ever makes is on the runner host. A thread that enters a namespace takes
no other thread with it, and pyarrow's S3 client keeps the threads it made first: in one
process that entered namespaces by thread, only the first hosts run reached its store.

The child gets its job and gives its answer through pickles in the run's control folder.
It has a session of its own, so a terminal's Ctrl-C reaches only the owner, which passes
each signal on once: the child stops the run as any run stops (harness.runner.interrupt)
and answers with its partial result.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.runner.errors import RunError
from harness.runner.hosts_setup import run_hosts
from harness.runner.interrupt import Interrupted, as_interrupted, signals_held, signals_interrupt
from harness.runner.rundir import RunOutcome, RunPaths
from harness.scenario import Scenario

if TYPE_CHECKING:
    from infra.hosts import HostNetwork

JOB_FILE = "runner_job.pickle"
ANSWER_FILE = "runner_answer.pickle"
# After a signal: how long the child may take to stop its run and write its partial result
# (its driver, cluster and store stop within their own bounds) before it is killed.
CHILD_STOP_S = 180.0
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class RunnerJob:
    scenario: Scenario
    paths: RunPaths
    variant: str | None
    quiet: bool
    master: str | None
    network: dict[str, Any]  # HostNetwork.to_dict() of the owner's network


def run_on_hosts(
    scenario: Scenario, paths: RunPaths, variant: str | None, quiet: bool, master: str | None
) -> RunOutcome:
    """Make the run's network, run the run in a child on its runner host, remove the
    network; the child's outcome, or its error or interruption raised here."""
    with run_hosts(scenario, paths) as network:
        assert network is not None  # the hosts backend, by the caller's test
        job = RunnerJob(scenario, paths, variant, quiet, master, network.to_dict())
        (paths.control / JOB_FILE).write_bytes(pickle.dumps(job))
        child = _start_child(network, paths)
        try:
            child.wait()
        except KeyboardInterrupt as exc:  # SIGINT or SIGTERM to the owner: pass it on once
            with signals_held():
                _stop_child(child, as_interrupted(exc).signum)
        return _answer(paths, child.returncode)


def _start_child(network: HostNetwork, paths: RunPaths) -> subprocess.Popen[bytes]:
    from infra.hosts.enter import inside

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PROJECT_ROOT), *sys.path])}
    main = "import sys; from harness.runner.runner_host import child_main; child_main(sys.argv[1])"
    command = [sys.executable, "-c", main, str(paths.control)]
    with inside(network.namespace("runner")):  # the child is born on the runner host
        return subprocess.Popen(command, env=env, start_new_session=True)


def _stop_child(child: subprocess.Popen[bytes], signum: int) -> None:
    child.send_signal(signum)
    try:
        child.wait(CHILD_STOP_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def _answer(paths: RunPaths, code: int | None) -> RunOutcome:
    """The child's answer: its outcome returned, its exception raised."""
    try:
        kind, value = pickle.loads((paths.control / ANSWER_FILE).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        raise RunError(
            f"the run's runner process on its runner host exited with {code} without an "
            f"answer; see its output above and {paths.logs}"
        ) from None
    if kind == "outcome":
        return value  # type: ignore[no-any-return]
    if kind == "interrupted":
        signum, run_dir = value
        interrupted = Interrupted(signum)
        interrupted.run_dir = run_dir
        raise interrupted
    raise value


def child_main(control_dir: str) -> None:
    """The child: run the job in the control folder, write the answer beside it."""
    control = Path(control_dir)
    from harness.runner.run import run_stored
    from infra.hosts import HostNetwork

    job: RunnerJob = pickle.loads((control / JOB_FILE).read_bytes())
    state = job.network
    network = HostNetwork(list(state["hosts"]), network_id=state["network_id"], owned=False)
    answer: tuple[str, Any]
    with signals_interrupt():
        try:
            run = (job.scenario, job.paths, job.variant, job.quiet, job.master)
            answer = ("outcome", run_stored(*run, network))
        except Interrupted as exc:
            answer = ("interrupted", (exc.signum, exc.run_dir))
        except KeyboardInterrupt:
            answer = ("interrupted", (signal.SIGINT, None))
        except Exception as exc:
            answer = ("raised", _picklable(exc))
    tmp = control / f"{ANSWER_FILE}.tmp"
    tmp.write_bytes(pickle.dumps(answer))
    os.replace(tmp, control / ANSWER_FILE)


def _picklable(exc: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
