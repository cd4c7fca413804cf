"""Every fault kind has a test that its evidence appears only after its effect (issue 11):
a kind added to harness/faults/kinds.py without one fails here. The evidence tests build
each kind's occurrence (or its label) by name, so the name in their source is looked for."""

import re
from pathlib import Path

from harness.faults.kinds import PARTS

HERE = Path(__file__).parent
EVIDENCE_TESTS = (
    "test_fault_evidence.py",  # skew, ACKs, storage, crashes
    "test_fault_evidence_process.py",  # drop_ack, coordinator_pause, worker faults
    "test_batch_writer_pause_evidence.py",
    "test_network_fault_evidence.py",  # partition, packet_loss
)


def test_every_fault_kind_has_an_evidence_after_effect_test() -> None:
    source = "\n".join((HERE / name).read_text() for name in EVIDENCE_TESTS)
    untested = [kind.value for kind in PARTS if not re.search(rf"\b{kind.value}\b", source)]
    assert untested == []
