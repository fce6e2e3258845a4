"""The operator console: Streamlit pages plus the pure chart builder they render.

The console raises no error of its own: what it shows comes from the planner's tree
(`planner.errors`) and the sessions package's (`sessions.errors`, as `sessions.client.errors` gathers them), caught by type.
"""
