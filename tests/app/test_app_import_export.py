"""The Import / Export page through AppTest (a real SQLite workspace), and bundle imports checked against
the importer's rights."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.policy.access import Principal
from memory_core.dashboard.helpers import _memory
from memory_core.portability.bundle import import_bundle_as, is_bundle, read_bundle
from tests.conftest import make_memory
from tests.app.test_app import APP, app_env  # noqa: F401  (the fixture)

DATA = Path(__file__).parents[1] / "data" / "imports"


def page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/import_export.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.file_uploader(key="import_file").set_value((name, content, "application/octet-stream"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_import_deerflow_preview_then_import_then_nothing_new(app_env):
    at = upload(page(), "memory.json", (DATA / "deerflow" / "memory.json").read_bytes())
    assert any("Detected format: **DeerFlow memory.json**" in m.value for m in at.markdown)
    preview = metrics(at)
    assert int(preview["Facts would be added"]) > 0
    assert _memory().facts.list() == []  # a preview writes nothing
    at.button(key="import_go").click().run()
    assert not at.exception and any("Imported into default/default" in s.value for s in at.success)
    facts = _memory().facts.list()
    assert len(facts) == int(preview["Facts would be added"])
    assert _memory().facts.history(facts[0].id)[0].actor == "dashboard:operator"
    assert "Facts would be added" not in metrics(at)  # no stale preview above the result
    at.file_uploader(key="import_file_1").set_value(("memory.json", (DATA / "deerflow" / "memory.json").read_bytes(),
                                                     "application/octet-stream"))
    at.run()  # the same file again: the preview promises nothing new
    assert metrics(at)["Facts would be added"] == "0"


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_import_chatgpt_conversations_are_queued(app_env):
    at = upload(page(), "conversations.json", (DATA / "chatgpt" / "conversations.json").read_bytes())
    would = int(metrics(at)["Conversations would be queued"])
    at.button(key="import_go").click().run()
    assert not at.exception and _memory().queue.pending() == would > 0
    assert any("wait in this scope's update queue" in i.value for i in at.info)


def test_garbage_upload_is_refused_and_changes_nothing(app_env):
    _memory().facts.add("User likes tea", "preference", 0.9)
    at = upload(page(), "conversations.json", b'[{"title": "cut off", "mapping": {')
    assert any("Cannot import this file" in e.value for e in at.error)
    assert all(b.key != "import_go" for b in at.button)
    assert [f.content for f in _memory().facts.list()] == ["User likes tea"]


def test_export_then_restore_a_bundle(app_env):
    memory = _memory()
    tea = memory.facts.add("User likes tea", "preference", 0.9)
    memory.write_core("## Preferences\n- User likes tea\n")
    at = page()
    at.button(key="export_prepare").click().run()
    assert not at.exception and at.get("download_button")
    _choice, _scope, name, data = at.session_state["_export"]
    assert name.startswith("memory_core-default-default-") and name.endswith(".zip")
    bundle = app_env / "bundle.zip"
    bundle.write_bytes(data)
    assert is_bundle(bundle) and read_bundle(bundle)[0]["scopes"] == ["default/default"]

    memory.facts.update(tea.id, content="User likes green tea")
    at = upload(page(), "backup.zip", data)
    assert any("memory_core bundle" in m.value for m in at.markdown)
    at.radio(key="import_mode").set_value("replace")
    at.button(key="import_go").click().run()
    assert not at.exception and any("Bundle imported" in s.value for s in at.success)
    assert memory.facts.get(tea.id).content == "User likes tea"  # the bundle won


def test_a_viewer_gets_no_uploader_but_may_export(app_env, monkeypatch):
    from memory_core.dashboard import helpers as dashboard

    _memory().facts.add("User likes tea", "preference", 0.9)
    monkeypatch.setattr(dashboard, "principal", lambda memory: Principal.person("vera@acme.com"))
    _memory().access.grant("vera@acme.com", "viewer", "default/*")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/import_export.py").run()
    assert not at.exception
    assert not at.file_uploader and any("not import into it" in i.value for i in at.info)
    at.button(key="export_prepare").click().run()
    assert not at.exception and at.session_state["_export"][3]


def test_bundle_import_needs_write_rights_on_every_scope_in_it(tmp_path):
    with make_memory(tmp_path) as m:
        m.facts.add("User likes tea", "preference", 0.9, user_id="ana", agent_name="bot")
        m.facts.add("User has a dog", "context", 0.9, user_id="bob", agent_name="coder")
        bundle = tmp_path / "b.zip"
        m.export_bundle(bundle)
    with make_memory(tmp_path / "other") as m:
        m.access.grant("ed@acme.com", "editor", "ana/*")
        m.access.grant("ed@acme.com", "viewer", "bob/*")
        ed = Principal.person("ed@acme.com")
        with pytest.raises(PermissionError, match="bob/coder"):
            import_bundle_as(m, ed, bundle)
        assert m.facts.list(user_id="ana", agent_name="bot") == []  # refused before anything changed
        m.access.grant("ed@acme.com", "editor", "bob/*")
        result = import_bundle_as(m, ed, bundle)
        assert result["scopes"] == ["ana/bot", "bob/coder"]
        (fact,) = m.facts.list(user_id="ana", agent_name="bot")
        assert fact.content == "User likes tea"  # restored as it was, its history too (not re-attributed)


def test_is_bundle_tells_bundles_from_other_zips(tmp_path):
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("manifest.json", '{"format": "something-else"}')
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"PK\x03\x04 not really")
    deep = tmp_path / "deep.zip"
    with zipfile.ZipFile(deep, "w") as z:
        z.writestr("manifest.json", "[" * 100_000 + "]" * 100_000)  # too deep for the parser
    assert not is_bundle(other) and not is_bundle(garbage) and not is_bundle(tmp_path / "missing.zip")
    assert not is_bundle(deep)


def test_a_workspace_folder_uploaded_as_it_is(app_env):
    root = DATA / "markdown" / "openclaw"
    files = [(f"openclaw/{p.relative_to(root).as_posix()}", p.read_bytes(), "text/markdown")
             for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in (".md", ".json")]
    at = page()
    at.file_uploader(key="import_folder").set_value(files)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Markdown workspace" in m.value for m in at.markdown)
    assert int(metrics(at)["Documents"]) >= 3
    at.button(key="import_go").click().run()
    assert not at.exception and "Priya" in (_memory().read_core() or "")


@pytest.mark.parametrize("name, parts", [
    ("ws/memory/2026-01-15.md", ["ws", "memory", "2026-01-15.md"]), ("../../etc/passwd", ["etc", "passwd"]),
    ("a\\..\\b c.md", ["a", "b_c.md"]), ("/abs/MEMORY.md", ["abs", "MEMORY.md"]), ("..", ["upload"]),
])
def test_uploaded_names_become_safe_paths(name, parts):
    from memory_core.dashboard.helpers import safe_upload_parts

    assert safe_upload_parts(name) == parts
