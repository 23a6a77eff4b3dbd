"""Issue 19 in the dashboard, through AppTest on a real SQLite workspace: a signed-in e-mail counts only when
verified; a public host's visitor gets a sandbox only when asking, within the caps; anonymous uploads are
small, and imports run one at a time per process."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard import helpers as dashboard
from memory_core.dashboard.helpers import _memory
from tests.app.test_app_access import AUTH, everything_shown

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
DATA = Path(__file__).parents[1] / "data" / "imports"
BOSS = "boss@acme.com"
SECRET_FACT = "The acquisition of Initech closes on Friday"
ENTRYPOINT_GUARD = dashboard.ensure_entrypoint


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMORY_CORE_TIMEZONE", "UTC")
    monkeypatch.setenv("MEMORY_CORE_ADMINS", BOSS)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMORY_CORE_DATABASE_URL", "MEMORY_CORE_ANONYMOUS_ACCESS",
                 "MEMORY_CORE_TRUST_UNVERIFIED_EMAIL", "STREAMLIT_SHARING_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(dashboard, "ensure_entrypoint", lambda: None)  # as in tests/app/test_app.py
    _memory.clear()
    yield monkeypatch
    _memory().close()
    _memory.clear()


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def as_user(claims: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets = AUTH
    at.user = {"is_logged_in": True, **claims}
    return run(at)


def assert_nothing_of_memory(at: AppTest) -> None:
    shown = everything_shown(at)
    assert SECRET_FACT not in shown and "ana/bot" not in shown and "Signed in as" not in shown
    assert not at.sidebar.selectbox and not at.data_editor and not at.dataframe


# -- sign-in: only a verified e-mail counts -----------------------------------------------------------


@pytest.mark.parametrize("claim", [False, "false", None, "yes"])
def test_an_unverified_email_gets_a_clear_page_and_nothing_of_memory(app_env, claim):
    _memory().facts.add(SECRET_FACT, "context", 0.9, user_id="ana", agent_name="bot")
    claims = {"email": BOSS} if claim is None else {"email": BOSS, "email_verified": claim}
    at = as_user(claims)
    assert [t.value for t in at.title] == ["Your e-mail address is not verified"]
    assert "is verified, so it cannot be used for access here" in at.error[0].value
    assert [b.label for b in at.button] == ["Sign out"]
    assert_nothing_of_memory(at)
    with pytest.raises(ValueError, match="Could not find a navigation page"):  # no deep link reaches a page
        at.switch_page("pages/facts.py")


@pytest.mark.parametrize("claim", [True, "true", "True"])
def test_a_verified_email_is_signed_in(app_env, claim):
    _memory().facts.add(SECRET_FACT, "context", 0.9, user_id="ana", agent_name="bot")
    at = as_user({"email": BOSS, "email_verified": claim})
    assert f"Signed in as {BOSS}" in [t.value for t in at.sidebar.text]  # plain text: copyable as it is
    assert "ana/bot" in at.sidebar.selectbox[0].options


def test_trust_unverified_email_takes_a_missing_claim_never_a_false_one(app_env):
    app_env.setenv("MEMORY_CORE_TRUST_UNVERIFIED_EMAIL", "true")
    at = as_user({"email": BOSS})  # a provider that never sends email_verified
    assert any("Signed in as" in t.value for t in at.sidebar.text)
    _memory.clear()
    at = as_user({"email": BOSS, "email_verified": False})  # it said no: no setting makes that a yes
    assert [t.value for t in at.title] == ["Your e-mail address is not verified"]
    assert_nothing_of_memory(at)


# -- a public host: sandboxes on request, capped -----------------------------------------------------


def visitor(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return run(at)


def sandboxes_created() -> int:
    return sum(1 for e in _memory().access.log() if e.action == "sandbox_created")


@pytest.fixture
def public(app_env):
    app_env.setenv("MEMORY_CORE_ANONYMOUS_ACCESS", "sandbox")
    _memory().facts.add(SECRET_FACT, "context", 0.9, user_id="ana", agent_name="bot")
    return app_env


def test_a_bare_visit_opens_no_sandbox_and_loads_nothing(public):
    for _ in range(3):
        at = visitor()
        assert [b.label for b in at.button] == ["Open a sandbox with demo data", "Open an empty sandbox"]
        assert_nothing_of_memory(at)
    at = visitor({"sandbox": "x" * 43})  # a stale link: said so, and nothing opened either
    assert any("has expired" in i.value for i in at.info)
    assert sandboxes_created() == 0 and [s.key for s in _memory().scopes()] == ["ana/bot"]


def test_a_sandbox_opens_when_asked_with_or_without_the_demo(public):
    at = visitor()
    at.button(key="sandbox_demo").click()
    run(at)
    key = at.query_params["sandbox"]
    [scope] = [s for s in _memory().scopes() if s.user_id.startswith("sandbox-")]
    assert at.sidebar.selectbox[0].options == [scope.key]
    assert any("Priya" in f.content for f in _memory().facts.list(user_id=scope.user_id, agent_name="demo"))
    again = visitor({"sandbox": key[0] if isinstance(key, list) else key})  # the link finds the same sandbox
    assert again.sidebar.selectbox[0].options == [scope.key] and sandboxes_created() == 1

    at = visitor()
    at.button(key="sandbox_empty").click()
    run(at)
    [empty] = [s for s in at.sidebar.selectbox[0].options]
    assert empty != scope.key and _memory().facts.list(user_id=empty.split("/")[0], agent_name="demo") == []


def test_a_visitor_over_the_cap_gets_a_message_not_a_crash(public):
    public.setenv("MEMORY_CORE_SANDBOX_MAX_LIVE", "1")
    _memory.clear()
    first = visitor()
    first.button(key="sandbox_empty").click()
    run(first)
    late = visitor()
    late.button(key="sandbox_empty").click()
    run(late)
    assert any(re.search(r"The demo is full: 1 sandboxes are open", w.value) for w in late.warning)
    assert_nothing_of_memory(late)
    assert sandboxes_created() == 1


# -- uploads: small for anonymous visitors, one import at a time --------------------------------------


def import_page(at: AppTest) -> AppTest:
    at.switch_page("pages/import_export.py")
    return run(at)


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.file_uploader(key="import_file").set_value((name, content, "application/octet-stream"))
    return run(at)


def test_a_sandbox_visitor_may_upload_only_a_small_file(public):
    public.setenv("MEMORY_CORE_SANDBOX_MAX_UPLOAD_MB", "2")
    _memory.clear()
    at = visitor()
    at.button(key="sandbox_empty").click()
    at = import_page(run(at))
    assert at.file_uploader(key="import_file").proto.max_upload_size_mb == 2  # the browser refuses more
    assert at.file_uploader(key="import_folder").proto.max_upload_size_mb == 2
    big = b'{"facts": [], "pad": "' + b"x" * (2 * 1024 ** 2) + b'"}'  # had the browser sent it anyway
    upload(at, "memory.json", big)
    assert [e.value for e in at.error] == ["That is 2.0 MiB; this page takes up to 2 MiB in a sandbox."]
    assert "import_go" not in [b.key for b in at.button]
    small = (DATA / "deerflow" / "memory.json").read_bytes()
    upload(at, "memory.json", small)
    assert any("Detected format" in m.value for m in at.markdown)


def test_the_operator_keeps_the_large_limit(app_env):
    at = import_page(run(AppTest.from_file(APP, default_timeout=60)))
    assert at.file_uploader(key="import_file").proto.max_upload_size_mb != 5  # the server's own (100 MiB here)
    upload(at, "memory.json", b'{"facts": [], "pad": "' + b"x" * (6 * 1024 ** 2) + b'"}')
    assert not at.error and any("Detected format" in m.value for m in at.markdown)


def test_imports_run_one_at_a_time_per_process(app_env):
    data = (DATA / "deerflow" / "memory.json").read_bytes()
    at = import_page(run(AppTest.from_file(APP, default_timeout=60)))
    with dashboard.import_slot() as got:  # another session's import holds the slot
        assert got
        upload(at, "memory.json", data)
        assert [w.value for w in at.warning] == [
            "Another import is running on this server; imports run one at a time. Try again in a moment: nothing "
            "was changed."]
        assert not any("Detected format" in m.value for m in at.markdown)
        with dashboard.import_slot() as second:
            assert not second  # a second one never waits behind the first
    at.button(key="import_retry").click()
    run(at)  # the slot is free again: the preview runs
    assert not at.warning and any("Detected format" in m.value for m in at.markdown)
    with dashboard.import_slot():
        at.button(key="import_go").click()
        run(at)
        assert [w.value for w in at.warning][-1].startswith("Another import is running")
        assert _memory().facts.list() == []
    at.button(key="import_go").click()
    run(at)
    assert any("Imported into default/default" in s.value for s in at.success) and _memory().facts.list()


# -- the sidebar never shows a database password ------------------------------------------------------


def test_the_sidebar_masks_a_password_given_in_the_urls_query(pg_url, app_env):  # pg_url: set up first, dropped last
    password = "sidebar-pw-9931"
    app_env.setenv("MEMORY_CORE_DATABASE_URL", f"{pg_url}&password={password}")  # 127.0.0.1 trusts any password
    at = run(AppTest.from_file(APP, default_timeout=60))
    [storage] = [re.sub(r"\\(.)", r"\1", c.value).replace("\u200b", "") for c in at.sidebar.caption
                 if c.value.startswith("Storage")]  # as it reads: without escape_markdown's marks
    assert "password=***" in storage and "@127.0.0.1:5432" in storage
    assert password not in everything_shown(at)
    assert password in _memory().settings.secrets()  # and the logs are scrubbed of it


def test_a_tab_left_open_past_expiry_stops_writing_into_the_removed_sandbox(public):
    at = visitor()
    at.button(key="sandbox_empty").click()
    run(at)
    [scope] = at.sidebar.selectbox[0].options
    memory = _memory()
    with memory.db.write() as s:  # its day is over (the SQL stands in for a clock 24 hours on)
        from sqlalchemy import text

        s.execute(text("UPDATE sandboxes SET expires_at = created_at"))
    assert memory.remove_expired_sandboxes() == [scope]
    # The same browser session goes on to the Facts page, through the entrypoint (AppTest would run a switched-to
    # page alone without the cold-start guard): the start page, not the removed scope.
    public.setattr(dashboard, "ensure_entrypoint", ENTRYPOINT_GUARD)
    at.switch_page("pages/facts.py")
    run(at)
    assert [b.label for b in at.button] == ["Open a sandbox with demo data", "Open an empty sandbox"]
    assert any("has expired" in i.value for i in at.info) and not at.sidebar.selectbox
