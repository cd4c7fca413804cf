"""The micro-benchmark step: a child pytest with --benchmark-json, parsed into stats."""

from pathlib import Path

from harness.jobs.benchmarks import run_benchmarks
from harness.jobs.suite import Benchmarks

FAST = ("--benchmark-max-time=0.01", "--benchmark-min-rounds=3", "-p", "no:warnings")
BENCH = """
def test_bench_sum(benchmark):
    benchmark(sum, range(100))
"""


def test_stats_per_benchmark(tmp_path: Path) -> None:
    (tmp_path / "test_b.py").write_text(BENCH)
    run = run_benchmarks(Benchmarks(tmp_path, FAST, 120), tmp_path / "out")
    assert run.error is None and run.verdict == "valid"
    ((name, stats),) = run.results.items()
    assert name.endswith("test_b.py::test_bench_sum")
    assert 0 < stats["min"] <= stats["median"] <= stats["max"] and stats["rounds"] >= 1


def test_a_failing_benchmark_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "test_b.py").write_text(BENCH + "\n\ndef test_broken():\n    assert False\n")
    run = run_benchmarks(Benchmarks(tmp_path, FAST, 120), tmp_path / "out")
    assert run.verdict == "unknown" and "pytest exited with 1" in run.error
    assert len(run.results) == 1  # the benchmarks that did run are still parsed
