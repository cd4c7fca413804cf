"""Fault injection: schedule scenario faults, apply them where they happen, record evidence."""
