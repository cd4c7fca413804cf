"""Shared building blocks of the scenario model: the strict base class and number types."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    """Every scenario section: a misspelt key is an error, never a silent default.

    A string right below a field is its description (in `instantbench schema` and the
    editor's hover text), so every key documents itself where it is declared."""

    # strict: `writers: yes` (a YAML bool) or `duration_s: "60"` is a wrong type, not 1 or 60.
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
        strict=True,
        allow_inf_nan=False,
    )


PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]

# Upper bounds: far above anything a run on one machine needs, low enough that a slip (an
# extra zero or three, milliseconds written for seconds) is an error instead of a run that
# never ends or fills the disk. On the fields, so they land in the JSON schema too.
MAX_RUN_S = 86_400.0  # one day
MAX_LATENCY_MS = 60_000.0  # a minute per storage operation or clock uncertainty
MAX_SKEW_MS = 86_400_000.0  # a clock a day off
MAX_ROWS_PER_S = 10_000_000.0
MAX_ROWS = 10_000_000  # rows in one batch, flush or commit
MAX_PARALLEL = 64  # writers, workers, readers, batch writers (each a thread or process)
MAX_COUNT = 10_000  # occurrences of a fault, repetitions

Seconds = Annotated[float, Field(ge=0, le=MAX_RUN_S)]
PosSeconds = Annotated[float, Field(gt=0, le=MAX_RUN_S)]
LatencyMs = Annotated[float, Field(ge=0, le=MAX_LATENCY_MS)]
SkewMs = Annotated[float, Field(ge=-MAX_SKEW_MS, le=MAX_SKEW_MS)]
DriftPpm = Annotated[float, Field(ge=-1_000_000, le=1_000_000)]  # -1e6: the clock stands still
RowsPerS = Annotated[float, Field(ge=0, le=MAX_ROWS_PER_S)]
Rows = Annotated[int, Field(ge=1, le=MAX_ROWS)]
Parallel = Annotated[int, Field(ge=1, le=MAX_PARALLEL)]
Count = Annotated[int, Field(ge=1, le=MAX_COUNT)]
