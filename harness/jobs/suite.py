"""Suite files (scenarios/suites/*.yaml): the scenarios a nightly run runs, their overrides,
whether the engine's pytest-benchmark micro-benchmarks run too, and the detector settings.

```yaml
name: nightly
scenarios:
  - scenario: ../smoke.yaml          # relative to the suite file
    set: [duration_s=20]             # --set overrides (dotted keys)
    id: smoke                        # history series name (default: the scenario's name)
    repeat: 1                        # runs per night; the night's value is their median
    expect: {verdict: invalid, checks: [exactly_once]}   # omit for "valid"
benchmarks: {path: ../../tests/benchmarks, args: []}   # omit for none
detector: {window: 20, min_history: 5, z_threshold: 5, min_change: 0.25}
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError

from harness.jobs.regression import DetectorParams
from harness.scenario import Scenario, ScenarioError, load_scenario, read_raw
from harness.scenario.base import Count, PosFloat, PosInt, PosSeconds, Strict
from harness.scenario.errors import problems_from_validation
from harness.scenario.model import CheckName

Name = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]


class SuiteError(ValueError):
    """A suite file that cannot be run; the message names the file and the key."""


class Expectation(Strict):
    """What a run must conclude (a detection run with its safety switch off: invalid)."""

    verdict: Literal["valid", "invalid"]
    """The run's verdict."""
    checks: list[CheckName] = Field(default_factory=list)
    """Checks that must each reach that verdict too (they must be among the scenario's
    checks); empty: only the run's verdict is judged."""


class EntrySpec(Strict):
    """One scenario of the suite."""

    scenario: str
    """The scenario file, relative to the suite file."""
    set: list[str] = Field(default_factory=list)
    """--set overrides (dotted keys), e.g. [duration_s=20]."""
    id: Name | None = None
    """The history series' name; none: the scenario's name (overrides do not change it)."""
    repeat: Count = 1
    """Runs per night; the night's value is their median."""
    expect: Expectation | None = None
    """What every run of the entry must conclude; none: valid. A run that concludes
    otherwise fails the night (exit 1; unknown stays exit 2)."""
    compare: bool = False
    """Run the entry as `instantbench compare` does (its matrix, its `repeat` and `compare`
    plan): its runs join the night as usual, and its headline decisions (compare.decide) as
    series `<id>/decisions`; a decision that differs from the last night's is flagged like
    a metric regression."""


class BenchmarkSpec(Strict):
    """The engine's pytest-benchmark micro-benchmarks."""

    path: str
    """The benchmarks' folder, relative to the suite file."""
    args: list[str] = Field(default_factory=list)
    """Extra pytest arguments."""
    timeout_s: PosSeconds = 900
    """How long they may take (s)."""


class DetectorSpec(Strict):
    """The regression detector (harness/jobs/regression.py): a robust z-score against the
    series' own history."""

    window: PosInt = DetectorParams.window
    """Nights of history the baseline (median, MAD) is taken over."""
    min_history: Annotated[int, Field(ge=2)] = DetectorParams.min_history
    """Nights a series needs before it can alarm."""
    z_threshold: PosFloat = DetectorParams.z_threshold
    """|z| in the bad direction that makes a regression."""
    min_change: PosFloat = DetectorParams.min_change
    """Relative change a regression needs as well (0.5 = 50%)."""


class SuiteSpec(Strict):
    """A nightly suite (`instantbench nightly SUITE`)."""

    name: Name
    """Names the suite's results."""
    scenarios: list[EntrySpec] = Field(default_factory=list)
    """The scenarios run each night."""
    include: list[str] = Field(default_factory=list)
    """Other suite files (relative to this one) whose scenarios run after these, as they
    are (their ids, overrides and expectations; not their benchmarks or detector)."""
    benchmarks: BenchmarkSpec | None = None
    """The engine's micro-benchmarks; none: not run."""
    detector: DetectorSpec = Field(default_factory=DetectorSpec)
    """The regression detector's settings."""


@dataclass(frozen=True)
class SuiteEntry:
    # The history series. Overrides do not change it on purpose: tonight's run with a slowed
    # storage layer must be judged against the history of the normal one.
    id: str
    file: Path
    overrides: tuple[str, ...]
    repeat: int
    scenario: Scenario
    expect: Expectation | None = None
    compare: bool = False  # a comparison (harness/jobs/nightly_compare.py), not runs

    def missed(self, result: dict) -> str | None:
        """Why a run's result.json misses the entry's expectation; None when it meets it
        (no expectation: the run is judged by its verdict alone)."""
        if self.expect is None:
            return None
        want = self.expect.verdict
        if result.get("verdict") != want:
            return f"expected {want}, got {result.get('verdict')}"
        checks = result.get("checks") or {}
        wrong = [
            f"{c}: {(checks.get(c) or {}).get('verdict', 'missing')}"
            for c in self.expect.checks
            if (checks.get(c) or {}).get("verdict") != want
        ]
        return f"expected {want} from {', '.join(wrong)}" if wrong else None


@dataclass(frozen=True)
class Benchmarks:
    path: Path
    args: tuple[str, ...]
    timeout_s: float


@dataclass(frozen=True)
class Suite:
    name: str
    source: Path
    entries: list[SuiteEntry]
    benchmarks: Benchmarks | None
    detector: DetectorParams


def load_suite(path: Path, including: tuple[Path, ...] = ()) -> Suite:
    """`including`: the suites whose `include` led here (a cycle is an error)."""
    path = Path(path)
    try:
        raw = read_raw(path)
    except ScenarioError as exc:  # unreadable or not YAML: same wording as for scenarios
        raise SuiteError(str(exc)) from None
    try:
        spec = SuiteSpec.model_validate(raw)
    except ValidationError as exc:
        problems = problems_from_validation(SuiteSpec, exc)
        raise SuiteError("\n".join(f"{path}: {p.text()}" for p in problems)) from None
    if not spec.scenarios and not spec.include and spec.benchmarks is None:
        raise SuiteError(f"{path}: scenarios: a suite needs at least one scenario or benchmarks")
    entries = [_entry(path, i, e) for i, e in enumerate(spec.scenarios)]
    chain = (*including, path.resolve())
    for i, name in enumerate(spec.include):
        included = (path.parent / name).resolve()
        if included in chain:
            raise SuiteError(f"{path}: include.{i}: {name} includes this suite again (a cycle)")
        entries += load_suite(included, chain).entries
    ids = [e.id for e in entries]
    if dupes := sorted({i for i in ids if ids.count(i) > 1}):
        raise SuiteError(
            f"{path}: scenarios: two entries share the id {', '.join(dupes)}; give each "
            "an `id:` of its own (it names the history series)"
        )
    benchmarks = None
    if spec.benchmarks is not None:
        bench_path = (path.parent / spec.benchmarks.path).resolve()
        if not bench_path.exists():
            raise SuiteError(f"{path}: benchmarks.path: {bench_path} does not exist")
        benchmarks = Benchmarks(bench_path, tuple(spec.benchmarks.args), spec.benchmarks.timeout_s)
    detector = DetectorParams(**spec.detector.model_dump())
    return Suite(spec.name, path, entries, benchmarks, detector)


def _entry(suite: Path, index: int, spec: EntrySpec) -> SuiteEntry:
    file = (suite.parent / spec.scenario).resolve()
    try:
        scenario = load_scenario(file, spec.set)
    except ScenarioError as exc:
        # One line per problem, each naming the suite entry and the scenario's key.
        lines = (f"{suite}: scenarios.{index}: {line}" for line in str(exc).splitlines())
        raise SuiteError("\n".join(lines)) from None
    if spec.expect is not None and (
        absent := [c for c in spec.expect.checks if c not in scenario.checks]
    ):
        raise SuiteError(
            f"{suite}: scenarios.{index}.expect.checks: {', '.join(absent)} not among the "
            f"scenario's checks ({', '.join(scenario.checks)})"
        )
    if spec.compare and (not scenario.matrix or not scenario.compare.decide or spec.repeat > 1):
        raise SuiteError(
            f"{suite}: scenarios.{index}.compare: a comparison needs a scenario with a matrix "
            "and compare.decide, and no entry repeat (the scenario's `repeat` is its pairs)"
        )
    return SuiteEntry(
        spec.id or scenario.name,
        file,
        tuple(spec.set),
        spec.repeat,
        scenario,
        spec.expect,
        spec.compare,
    )
