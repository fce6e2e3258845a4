"""The operator console: Streamlit pages plus the pure builders (chart, exports) they render."""
