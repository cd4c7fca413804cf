"""The jobs built on single runs: compare (A/B), nightly, capacity."""
