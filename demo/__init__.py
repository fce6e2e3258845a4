"""Bundled demo material: an offline web shop for the agent to act on, and tasks to run against it.

`suite.py` runs every task on a fresh shop and checks the answers (`python -m demo suite`).
"""
