"""Streamlit entry point of the operator console: `streamlit run app.py`."""

from ui.app import main

main()
