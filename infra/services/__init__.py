"""Real services a scenario needs, started by the harness on loopback and stopped after."""
