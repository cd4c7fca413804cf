"""Locust pieces for OCC contention: batch-writer users and a step load shape.

Importing locust monkey-patches the process for gevent, so these modules are only imported
in the child process that `harness.jobs.contention` starts, never by the harness itself.
"""
