"""The dashboard as a product, through Streamlit's AppTest: scope switching, the Overview, Context Preview's
budget presets and struck-through dropped facts, Facts' status badges and empty states, Search's filler.

(AppTest keeps the sidebar's widgets of the first run only and replays their first values, so the sidebar's
new-scope flow is tested in chromium: tests/test_browser_dashboard.py.)"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from memory_core.dashboard import get_memory
from tests.test_app import app_env, page  # noqa: F401  (app_env is a fixture)

APP = str(Path(__file__).resolve().parents[1] / "streamlit_app.py")
