"""The runner: one scenario run, supervised from the `instantbench` process."""
