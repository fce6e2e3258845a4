"""The operator console: Streamlit pages plus the pure builders (chart, exports) they render.

The console raises one error of its own; everything else it shows comes from the planner's tree
(`planner.errors`) and the sessions package's (`sessions.errors`), caught by type:

    ExportUnavailable   an export needs a program or package that is not installed (`ui.exports`)
"""
