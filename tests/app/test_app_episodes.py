"""The Conversations page: what was said on a day, dated, through Streamlit's AppTest."""

from __future__ import annotations

from datetime import datetime, timezone

from streamlit.testing.v1 import AppTest

from memory_core.dashboard.helpers import _memory
from tests.app.test_app import APP, app_env, page  # noqa: F401 (the fixture)


def test_conversations_page_reads_a_day(app_env):  # noqa: F811
    at = page("episodes")
    assert any("No conversations yet" in i.value for i in at.info)
    _memory().update([{"role": "user", "content": "I went to a support group yesterday.", "name": "Caroline"},
                         {"role": "assistant", "content": "How was it?", "name": "Melanie"}], thread_id="s1",
                        when=datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc))
    at = page("episodes")
    assert at.selectbox(key="episodes_day").value == "2023-05-08"
    shown = [t.value for t in at.text]
    assert shown == ["Caroline: I went to a support group yesterday (7 May 2023).", "Melanie: How was it?"]
    at.text_input(key="episodes_filter").input("melanie").run()
    assert [t.value for t in at.text] == ["Melanie: How was it?"]


def test_the_page_is_in_the_navigation():
    assert "pages/episodes.py" in open(APP, encoding="utf-8").read()
    assert AppTest  # the other pages' tests live in test_app.py
