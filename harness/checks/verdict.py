"""Combining checker verdicts and mapping them to the CLI exit code (DESIGN.md)."""

from collections.abc import Iterable

from harness.checks.result import CheckResult, Verdict

EXIT_VALID, EXIT_INVALID, EXIT_ERROR = 0, 1, 2
# DESIGN.md "CLI": 0 every check valid, 1 a violation, 2 bad input, an error or unknown.
EXIT_CODES: dict[str, int] = {"valid": EXIT_VALID, "invalid": EXIT_INVALID, "unknown": EXIT_ERROR}


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
    """0 valid, 1 invalid, 2 unknown (or anything unexpected, e.g. "error": fail closed).

    The one verdict-to-exit-code mapping: run, compare, nightly and capacity all use it."""
    return EXIT_CODES.get(verdict, EXIT_ERROR)


def worst_exit_code(verdicts: Iterable[str], empty: int = EXIT_VALID) -> int:
    """The highest exit code among the verdicts; `empty` when there are none (a job that
    ran nothing decides for itself whether that passes)."""
    return max((exit_code(v) for v in verdicts), default=empty)
