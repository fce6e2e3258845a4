"""What the console sends the browser: never a message by reference (see `.streamlit/config.toml`).

Streamlit 1.67 drops a fragment's queued deltas when a rerun of that fragment starts, but keeps the
reference messages among them, which carry no fragment id. Under load the live panel's timer asked
for its fragment while the whole run's messages were still queued; the browser then got a chart
reference whose parent containers had been dropped, threw "Bad delta path index 12" and left the
console blank until a reload (a CI run, and 3 of 8 runs of the approval e2e test under stress-ng).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit import config
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.forward_msg_cache import populate_hash_if_needed

CONFIG = Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml"


@pytest.fixture
def console_config() -> Iterator[dict[str, dict[str, object]]]:
    """The console's Streamlit settings applied to this process, as `streamlit run app.py` applies them."""
    settings = tomllib.loads(CONFIG.read_text())
    saved = {
        f"{section}.{name}": config.get_option(f"{section}.{name}")
        for section in settings
        for name in settings[section]
    }
    for key in saved:
        section, name = key.split(".")
        config.set_option(key, settings[section][name])
    yield settings
    for key, value in saved.items():
        config.set_option(key, value)


def test_a_large_element_is_sent_whole_never_as_a_reference(console_config: dict[str, dict[str, object]]) -> None:
    chart = ForwardMsg()
    chart.metadata.delta_path[:] = [0, 3, 3, 0, 1]
    chart.delta.fragment_id = "live-panel"
    chart.delta.new_element.markdown.body = "x" * 2_000_000  # far past Streamlit's 10 kB default
    populate_hash_if_needed(chart)
    assert not chart.metadata.cacheable, "a cacheable message goes out as a reference the fragment rerun keeps"
