"""The focus script after a page change (memory_core.dashboard.focus) holds the page's title as data only."""

from __future__ import annotations

import pytest

from memory_core.dashboard.focus import script


@pytest.mark.parametrize("title, written", [
    ("Facts", '"Facts"'),
    ("Import / Export", '"Import / Export"'),
    ('Say "hi"', '"Say \\"hi\\""'),
    ("</script><img src=x onerror=alert(1)>", '"\\u003c/script>\\u003cimg src=x onerror=alert(1)>"'),
])
def test_the_title_is_a_javascript_string_that_cannot_end_the_script(title, written):
    text = script(title)
    assert f"const page = {written};" in text
    assert text.count("</script>") == 1 and text.endswith("</script>")
    assert text.count("<") == text.count("<script>") + text.count("</script>")  # no markup of the title's
