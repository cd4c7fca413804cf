"""Fault kinds as declared parts (harness/faults/kinds.py): one row per kind says where it is
applied and how its keys read; the schedule, the processes and `instantbench faults` use it."""

from harness.faults import kinds
from harness.faults.catalog import catalog, fault_models, render
from harness.faults.kinds import PARTS, FaultKind
from harness.scenario.faults import CLUSTER_FAULTS


def test_every_scenario_fault_kind_is_declared_and_applied_somewhere() -> None:
    assert {k.value for k in FaultKind} == set(fault_models()) == set(PARTS)
    assert all(p.applied_in and len(set(p.applied_in)) == len(p.applied_in) for p in PARTS.values())


def test_the_derived_groups_are_the_ones_the_schedule_and_processes_used() -> None:
    assert {
        "drop_ack",
        "delay_ack",
        "stale_ack",
        "storage_error",
        "torn_file",
    } == kinds.COUNTED_KINDS
    assert {"clock_skew", "storage_latency"} == kinds.LASTING_KINDS
    assert {"worker_kill", "worker_pause"} == kinds.WORKER_KINDS
    network = {"partition", "link_latency", "packet_loss"}  # the hosts backend's
    assert set(CLUSTER_FAULTS) == kinds.WORKER_KINDS | network
    assert {"storage_latency", "storage_error", "torn_file"} == kinds.STORAGE_KINDS
    assert kinds.kinds_where("driver") >= {"drop_ack", "delay_ack", "stale_ack", "clock_skew"}


def test_faults_shows_where_each_kind_is_applied() -> None:
    docs = {d.kind: d for d in catalog()}
    assert docs["batch_writer_pause"].applied_in == "batch_writers"
    assert docs["worker_kill"].to_dict()["applied_in"] == "runner"
    assert "  applied in: driver\n" in render([docs["drop_ack"]])
