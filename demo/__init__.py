"""Bundled demo material: an offline web shop for the agent to act on, and tasks to run against it."""
