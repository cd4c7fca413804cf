"""The result of one checker: a tri-state verdict and evidence a person can act on."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["valid", "invalid", "unknown"]

# Evidence lists are capped: enough to find the bug, small enough for result.json.
MAX_LISTED = 20


@dataclass(frozen=True)
class CheckResult:
    name: str
    verdict: Verdict
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The entry under result.json `checks[name]`: {verdict, ...evidence}."""
        return {"verdict": self.verdict, **self.evidence}


def capped(items: Iterable[Any], limit: int = MAX_LISTED) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if len(out) == limit:
            break
        out.append(item.item() if hasattr(item, "item") else item)  # numpy scalars -> JSON
    return out


def fail_closed(
    name: str, evidence: dict[str, Any], reasons: Iterable[tuple[bool, str | None]]
) -> CheckResult:
    """`valid` only if no (hit, why) pair hit: otherwise `unknown`, naming every reason the
    evidence is missing or proves nothing (DESIGN.md, Evidence rules). Call it once the
    evidence showed no violation."""
    found = [why or "unspecified" for hit, why in reasons if hit]
    if found:
        return CheckResult(name, "unknown", {"reason": "; ".join(found), **evidence})
    return CheckResult(name, "valid", evidence)
