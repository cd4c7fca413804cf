"""Each fault kind really happens (its evidence is in the history) and, with every safety
switch on, the run's checks stay valid."""

import json

import pytest

pytestmark = pytest.mark.spark

# fault scenario -> (fault kind, evidence key that proves it took effect)
FAULTS = {
    "writer-crash": ("writer_crash", "attempt"),
    "coordinator-crash": ("coordinator_crash", "pid"),
    "drop-ack": ("drop_ack", "checkpoint_id"),
    "delay-ack": ("delay_ack", "checkpoint_id"),
    "stale-ack": ("stale_ack", "checkpoint_id"),
    "clock-skew": ("clock_skew", "clock_after_ms"),
    "storage-latency": ("storage_latency", "latency_ms"),
    "storage-error": ("storage_error", "path"),
    "torn-file": ("torn_file", "truncated_to"),
    "coordinator-pause": ("coordinator_pause", "paused_pid"),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_happens_and_checks_stay_valid(run, name):
    kind, proof = FAULTS[name]
    outcome = run(f"faults/{name}")
    result = json.loads(outcome.paths.result.read_text())
    applied = [f for f in result["faults"] if f["kind"] == kind and f["applied"]]
    assert applied, f"{kind} left no evidence: {result['faults']}"
    assert all(proof in f["evidence"] for f in applied), applied
    assert result["verdict"] == "valid", json.dumps(
        {k: v for k, v in result["checks"].items() if v["verdict"] != "valid"}, indent=1
    )[:4000]
