"""The access policy as a table of cases; grants, tokens and sandboxes on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from memory_core.policy.access import NOBODY, OPERATOR, Principal, covers
from memory_core.scope import Scope
from tests.conftest import make_memory

GRANTS = [
    ("ana@acme.com", "editor", "ana/*"),
    ("ana@acme.com", "viewer", "*/coder"),
    ("@acme.com", "viewer", "team/*"),
    ("lead@acme.com", "admin", "*/*"),
    ("Eve@Example.org", "viewer", "eve/bot"),
    ("@contractors.io", "editor", "*/coder"),
]

CASES = [  # (e-mail, scope, expected role)
    ("ana@acme.com", "ana/bot", "editor"),
    ("ANA@ACME.COM", "ana/bot", "editor"),  # e-mails compare case-insensitively
    ("ana@acme.com", "ana/coder", "editor"),  # the strongest of two grants
    ("ana@acme.com", "bob/coder", "viewer"),
    ("ana@acme.com", "bob/bot", None),
    ("ana@acme.com", "team/bot", "viewer"),  # through the domain grant
    ("bob@acme.com", "team/anything", "viewer"),
    ("bob@acme.com", "ana/bot", None),
    ("bob@acme.co", "team/bot", None),  # another domain, however close
    ("ana@acme.com.evil.io", "team/bot", None),
    ("lead@acme.com", "whoever/whatever", "admin"),
    ("eve@example.org", "eve/bot", "viewer"),
    ("eve@example.org", "eve/bot2", None),
    ("x@contractors.io", "ana/coder", "editor"),
    ("root@boot.dev", "any/scope", "admin"),  # Settings.admins bootstraps
    ("Root@Boot.dev", "other/scope", "admin"),
    ("not-an-email", "ana/bot", None),
    ("", "ana/bot", None),
]


@pytest.fixture
def policy(tmp_path, database_url):
    m = make_memory(tmp_path, database_url, admins=["ROOT@boot.dev"])
    for subject, role, scope in GRANTS:
        m.access.grant(subject, role, scope)
    yield m
    m.close()


def test_policy_table(policy):
    for email, scope, expected in CASES:
        user, agent = scope.split("/")
        assert policy.access.role_for(email, user_id=user, agent_name=agent) == expected, (email, scope)
        for action, needed in (("read", "viewer"), ("write", "editor"), ("admin", "admin")):
            allowed = expected is not None and ("viewer", "editor", "admin").index(expected) >= \
                ("viewer", "editor", "admin").index(needed)
            assert policy.access.can(email, action, user_id=user, agent_name=agent) is allowed, (email, scope, action)


def test_grant_validation_revoke_and_audit(policy):
    access = policy.access
    for subject, role, scope in [("ana", "viewer", "*/*"), ("ana@acme.com", "owner", "*/*"),
                                 ("ana@acme.com", "viewer", "ana"), ("ana@acme.com", "viewer", "a/b/c"),
                                 ("ana@acme.com", "viewer", "../x"), ("@", "viewer", "*/*"),
                                 ("ana@acme.com", "viewer", "a b/c")]:
        with pytest.raises(ValueError):
            access.grant(subject, role, scope)
    with policy.acting_as("dashboard:lead@acme.com"):
        grant = access.grant("new@acme.com", "viewer", "new/*")
        changed = access.grant("NEW@acme.com", "editor", "new/*")  # the same subject and pattern: a new role
    assert changed.id == grant.id and access.role_for("new@acme.com", user_id="new", agent_name="x") == "editor"
    access.revoke(grant.id)
    assert access.role_for("new@acme.com", user_id="new", agent_name="x") is None
    with pytest.raises(KeyError):
        access.revoke(grant.id)
    with pytest.raises(KeyError):
        access.revoke(42)
    with pytest.raises(ValueError):
        access.can("ana@acme.com", "delete")
    actions = [(e.action, e.actor) for e in access.log()][:3]
    assert actions == [("revoke", None), ("grant_changed", "dashboard:lead@acme.com"),
                       ("grant", "dashboard:lead@acme.com")]


def test_principals_and_views(policy):
    access = policy.access
    ana = Principal.person("Ana@Acme.com")
    assert ana.actor == "dashboard:ana@acme.com"
    view = access.view(policy, ana, user_id="ana", agent_name="bot")
    assert view.role == "editor" and view.actor == "dashboard:ana@acme.com"
    with pytest.raises(PermissionError):
        access.view(policy, ana, user_id="bob", agent_name="bot")
    assert access.view(policy, OPERATOR, user_id="bob", agent_name="bot").role == "admin"
    with pytest.raises(PermissionError):
        access.view(policy, NOBODY, user_id="ana", agent_name="bot")
    scopes = [Scope("ana", "bot"), Scope("bob", "bot"), Scope("bob", "coder"), Scope("team", "x")]
    assert access.readable(ana, scopes) == [Scope("ana", "bot"), Scope("bob", "coder"), Scope("team", "x")]
    assert access.allows(ana, "write", Scope("ana", "bot")) and not access.allows(ana, "admin", Scope("ana", "bot"))
    assert not access.allows(ana, "read", Scope("bob", "bot")) and access.allows(OPERATOR, "admin", Scope("bob", "bot"))
    with pytest.raises(ValueError):
        access.allows(ana, "delete", Scope("ana", "bot"))
    sandbox, key = access.new_sandbox()
    assert access.readable(sandbox, scopes + [sandbox.sandbox]) == [sandbox.sandbox]
    assert access.sandbox_for(key) == sandbox and access.sandbox_for(key[:-1] + "x") is None
    assert access.sandbox_for(None) is None and access.new_sandbox()[0] != sandbox
    assert access.is_sandbox(sandbox.sandbox) and not access.is_sandbox(Scope("ana", "bot"))
    assert access.admin_patterns(Principal.person("lead@acme.com")) == ["*/*"]
    assert access.admin_patterns(ana) == [] and access.is_global_admin(OPERATOR)
    with pytest.raises(PermissionError):
        access.grant_as(ana, "x@acme.com", "viewer", "ana/*")


def test_scoped_admins_manage_only_what_they_cover(policy):
    access = policy.access
    access.grant("owner@acme.com", "admin", "ana/*")
    owner = Principal.person("owner@acme.com")
    access.grant_as(owner, "helper@acme.com", "editor", "ana/bot")
    for pattern in ("*/*", "ana*/*", "bob/bot"):
        with pytest.raises(PermissionError):
            access.grant_as(owner, "helper@acme.com", "editor", pattern)
    token, _secret = access.create_token_as(owner, "ana-bot", user_id="ana", agent_name="bot")
    with pytest.raises(PermissionError):
        access.create_token_as(owner, "bob-bot", user_id="bob", agent_name="bot")
    access.revoke_token_as(owner, token.id)
    assert not access.is_global_admin(owner)


@pytest.mark.parametrize("outer,inner,expected", [
    ("*/*", "ana/bot", True), ("*/*", "*/*", True), ("ana/*", "ana/bot", True), ("ana/*", "ana/*", True),
    ("ana/*", "*/bot", False), ("ana/*", "anabel/bot", False), ("an*/*", "ana/bot", True),
    ("an*/*", "an*/bot", True), ("an*/*", "a*/bot", False), ("ana/bot", "ana/bot", True), ("ana/bot", "ana/*", False),
])
def test_covers(outer, inner, expected):
    assert covers(outer, inner) is expected


@pytest.mark.parametrize("setting,public,sign_in,expected", [
    (None, False, False, "full"), (None, True, False, "sandbox"), (None, True, True, "none"),
    ("none", False, False, "none"), ("full", True, False, "full"), ("sandbox", False, False, "sandbox"),
    ("full", True, True, "none"),
])
def test_anonymous_mode(tmp_path, setting, public, sign_in, expected):
    with make_memory(tmp_path, anonymous_access=setting) as m:
        assert m.access.anonymous_mode(public_host=public, sign_in_configured=sign_in) == expected
    with pytest.raises(ValueError):
        make_memory(tmp_path, anonymous_access="everyone")


def test_tokens_hashed_verified_revoked_and_expiring(tmp_path, database_url, clock):
    with make_memory(tmp_path, database_url, clock=clock) as m:
        token, secret = m.access.create_token("ci-bot", user_id="ana", agent_name="bot", role="viewer",
                                              expires_at=clock.now() + timedelta(days=1))
        assert secret.startswith("mc_") and len(secret) > 40 and token.role == "viewer"
        with m.db.read() as s:
            dump = " ".join(str(r) for r in s.execute(text("SELECT * FROM api_tokens")).all())
            dump += " ".join(str(r) for r in s.execute(text("SELECT * FROM access_audit")).all())
        assert secret not in dump and secret[3:20] not in dump  # stored only as a hash
        found = m.access.verify_token(secret)
        assert found.id == token.id and found.last_used_at == clock.now()
        for bad in ("", "mc_nope", secret + "x", None, 42, "x" * 10_000):
            assert m.access.verify_token(bad) is None
        with pytest.raises(ValueError):
            m.access.create_token("ci-bot", user_id="ana", agent_name="bot")  # an active token has that name
        with pytest.raises(ValueError):
            m.access.create_token("bad\nname", user_id="ana", agent_name="bot")
        with pytest.raises(ValueError):
            m.access.create_token("x", user_id="../etc", agent_name="bot")
        with pytest.raises(ValueError):
            m.access.create_token("x", user_id="ana", agent_name="bot", role="root")
        view = m.access.view(m, Principal("token", token=found), user_id="ana", agent_name="bot")
        assert view.role == "viewer" and view.actor == "mcp:ci-bot"
        with pytest.raises(PermissionError):
            m.access.view(m, Principal("token", token=found), user_id="bob", agent_name="bot")
        clock.advance(2 * 86400)
        with pytest.raises(PermissionError):  # a token that expired while held gives no access either
            m.access.view(m, Principal("token", token=found), user_id="ana", agent_name="bot")
        assert m.access.verify_token(secret) is None  # expired
        other, other_secret = m.access.create_token("agent-2", user_id="ana", agent_name="bot")
        assert m.access.verify_token(other_secret).id == other.id
        m.access.revoke_token(other.id)
        assert m.access.verify_token(other_secret) is None
        assert {t.id: t.revoked for t in m.access.tokens()} == {token.id: False, other.id: True}
        with pytest.raises(KeyError):
            m.access.revoke_token("tok_00000000")


def test_only_an_admin_of_every_scope_switches_the_nightly_dream(policy):
    assert policy.worker.dream_enabled
    for who in (Principal.person("ana@acme.com"), Principal.person("eve@example.org"), NOBODY,
                Principal("sandbox", sandbox=Scope("sbx", "default"))):
        with pytest.raises(PermissionError, match=r"\*/\*"):
            policy.set_dreams_enabled(False, principal=who)
    assert policy.worker.dream_enabled and not [e for e in policy.access.log() if e.action == "worker_switch"]
    policy.access.grant("carol@acme.com", "admin", "ana/*")  # an admin of some scopes only
    with pytest.raises(PermissionError):
        policy.set_dreams_enabled(False, principal=Principal.person("carol@acme.com"))
    with pytest.raises(ValueError):
        policy.set_dreams_enabled("off", principal=OPERATOR)
    policy.set_dreams_enabled(False, principal=Principal.person("lead@acme.com"))
    assert not policy.worker.dream_enabled and policy.worker.next_dream() is None
    switch = [e for e in policy.access.log() if e.action == "worker_switch"]
    assert len(switch) == 1 and switch[0].actor == "dashboard:lead@acme.com"
    assert switch[0].detail == {"job": "nightly dream", "enabled": "False"}
    policy.set_dreams_enabled(True, principal=OPERATOR)
    assert policy.worker.dream_enabled
