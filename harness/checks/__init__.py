"""Correctness checkers (DESIGN.md "Correctness"): pure functions over plain data."""

from harness.checks.bank import bank
from harness.checks.exactly_once import exactly_once
from harness.checks.exactly_once_upserts import exactly_once_upserts
from harness.checks.hudi_reader import hudi_reader
from harness.checks.isolation import fingerprint, isolation
from harness.checks.result import CheckResult, Verdict
from harness.checks.timeline import timeline
from harness.checks.unique_keys import unique_keys
from harness.checks.verdict import EXIT_CODES, combine, combine_verdicts, exit_code

__all__ = [
    "EXIT_CODES",
    "CheckResult",
    "Verdict",
    "bank",
    "combine",
    "combine_verdicts",
    "exactly_once",
    "exactly_once_upserts",
    "exit_code",
    "fingerprint",
    "hudi_reader",
    "isolation",
    "timeline",
    "unique_keys",
]
