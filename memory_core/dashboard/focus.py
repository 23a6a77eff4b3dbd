"""Keyboard focus after a page change: from the sidebar link just used to the new page's title, as a screen reader
and a keyboard user expect (Streamlit leaves it on the link).

A tiny script of our own, run in the page by `st.html` (no frame: a frame that came and went kept chromium's
network busy). It holds no memory text, only the page's title, which is the code's own. It moves focus once per
page change, and only while focus is in the sidebar or nowhere: someone already typing in the page keeps their
place (an earlier version that always moved it disturbed typing under load).
"""

from __future__ import annotations

import json

import streamlit as st

SCRIPT = """<script>
(() => {
  const page = PAGE_TITLE;
  const move = (tries) => {
    if (window.__memoryCoreFocused === page) return;
    const title = document.querySelector('[data-testid=stMain] h1');
    if (!title || !title.textContent.includes(page)) {  // the new page's title is not drawn yet
      if (tries > 0) setTimeout(() => move(tries - 1), 100);
      return;
    }
    window.__memoryCoreFocused = page;
    const here = document.activeElement;
    const sidebar = document.querySelector('[data-testid=stSidebar]');
    if (here && here !== document.body && !(sidebar && sidebar.contains(here))) return;
    title.setAttribute('tabindex', '-1');
    title.focus({preventScroll: true});
  };
  move(30);
})();
</script>"""


def script(title: str) -> str:
    """The script for a page titled `title` (written as a JSON string, `<` escaped: it cannot end the script)."""
    return SCRIPT.replace("PAGE_TITLE", json.dumps(title).replace("<", "\\u003c"))


def focus_title_after_page_change(title: str) -> None:
    """Draw the script, in the sidebar (out of the page's flow); the same on every run of a page, so a rerun
    does not run it again."""
    st.sidebar.html(script(title), unsafe_allow_javascript=True)
