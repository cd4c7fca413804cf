"""What every fault entry shares: its timing keys, repetition, and the forms a `target`
may take (TargetForms)."""

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from harness.scenario.base import Count, PosSeconds, Seconds, Strict

_FORM_PATTERNS = {
    "writer:N": r"writer:\d+",
    "batch_writer:N": r"batch_writer:\d+",
    "worker:N": r"worker:\d+",
    "coordinator": "coordinator",
    "all": "all",
    "random": "random",
    "host": r"runner|driver|master|s3|zookeeper|worker:\d+",
}


@dataclass(frozen=True)
class TargetForms:
    """The forms a `target` string accepts (`Annotated[str, TargetForms(...)]`): it refuses
    any other with an error that lists them (and `why` the others are not), gives editors
    the pattern (the JSON Schema) and `instantbench faults` the forms."""

    forms: tuple[str, ...]
    why: str = ""

    @property
    def regex(self) -> str:
        return "|".join(f"(?:{_FORM_PATTERNS[f]})" for f in self.forms)

    def check(self, value: str) -> str:
        if not re.fullmatch(self.regex, value):
            because = f" ({self.why})" if self.why else ""
            allowed = " | ".join(self.forms)
            raise ValueError(f"{value!r} is not a valid target; allowed: {allowed}{because}")
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {**handler(schema), "pattern": f"^(?:{self.regex})$"}


class FaultBase(Strict):
    at_s: Seconds
    """Seconds after run start (the warm-up counts) when the fault first fires."""
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None
    """Seed of this fault's random choices (a random target); none: the scenario's seed plus
    the fault's position in `faults`."""

    @property
    def span_s(self) -> float:
        """How long one occurrence lasts; 0 for instantaneous faults."""
        return getattr(self, "duration_s", None) or 0.0

    @property
    def every(self) -> float | None:
        """Seconds from one occurrence to the next; None: it happens once."""
        return None

    @property
    def occurrences(self) -> int | None:
        """How many occurrences; None: one, or with `every` until the run ends."""
        return None


class RepeatingFault(FaultBase):
    """`count` occurrences `every_s` apart (count None: once, or until the run ends)."""

    every_s: PosSeconds | None = None
    """Repeat every N seconds; none: once (or `count` times in a row)."""
    count: Count | None = None
    """How many times it fires; none: once, or with every_s until the run ends."""

    @property
    def every(self) -> float | None:
        return self.every_s

    @property
    def occurrences(self) -> int | None:
        return self.count
