"""The scenario model (DESIGN.md "Scenario file"): load, override, validate, expand."""

from harness.scenario.errors import Problem, ScenarioError
from harness.scenario.faults import Fault
from harness.scenario.keys import DottedKeyError
from harness.scenario.loader import load_scenario, read_raw
from harness.scenario.matrix import expand_matrix, variant_name
from harness.scenario.model import Scenario
from harness.scenario.overrides import parse_override, set_dotted
from harness.scenario.rate import Rate
from harness.scenario.validate import validate_scenario

__all__ = [
    "DottedKeyError",
    "Fault",
    "Problem",
    "Rate",
    "Scenario",
    "ScenarioError",
    "expand_matrix",
    "load_scenario",
    "parse_override",
    "read_raw",
    "set_dotted",
    "validate_scenario",
    "variant_name",
]
