"""Combining checker verdicts and mapping them to the CLI exit code (DESIGN.md)."""

from collections.abc import Iterable

from harness.checks.result import CheckResult, Verdict

EXIT_CODES: dict[str, int] = {"valid": 0, "invalid": 1, "unknown": 2}


def combine_verdicts(verdicts: Iterable[str], allow_empty: bool = False) -> Verdict:
    """invalid if any is invalid, else unknown if any is unknown, else valid.

    No verdicts at all is unknown (fail closed: checks that never ran prove nothing) unless
    the caller says a run without checks is intended.
    """
    seen = set(verdicts)
    if not seen:
        return "valid" if allow_empty else "unknown"
    if "invalid" in seen:
        return "invalid"
    if seen != {"valid"}:
        return "unknown"  # includes any verdict string we do not know
    return "valid"


def combine(results: Iterable[CheckResult], allow_empty: bool = False) -> Verdict:
    """combine_verdicts over CheckResults."""
    return combine_verdicts((r.verdict for r in results), allow_empty)


def exit_code(verdict: str) -> int:
    """0 valid, 1 invalid, 2 unknown (or anything unexpected: fail closed)."""
    return EXIT_CODES.get(verdict, 2)
