"""`memory-core token create | list | revoke`, as an operator runs it: the real console script in a subprocess,
checked against the database it wrote (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.cli.test_cli import cli_env, ok, opened, refused, run


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_create_prints_the_secret_once_list_shows_it_never_revoke_stops_it(tmp_path, database_url):
    env = cli_env(tmp_path / "home", None if database_url.startswith("sqlite") else database_url)

    created = run(env, "token", "create", "ci-bot", "--user", "ana", "--agent", "coder", "--role", "viewer",
                  "--expires-days", "30")
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip()
    assert secret.startswith("mc_") and len(secret.splitlines()) == 1  # stdout is the secret alone: `$(...)` works
    assert "viewer of ana/coder" in created.stderr and secret not in created.stderr

    as_json = json.loads(ok(env, "token", "create", "deploy", "--user", "ana", "--agent", "ops", "--json"))
    assert as_json["role"] == "editor" and as_json["expires_at"] is None and as_json["secret"].startswith("mc_")

    with opened(env) as memory:
        token = memory.access.verify_token(secret)
        assert token is not None and (token.name, token.scope.key, token.role) == ("ci-bot", "ana/coder", "viewer")
        assert timedelta(days=29) < token.expires_at - token.created_at <= timedelta(days=30)
        assert token.created_by == "cli:token"
        assert {e.action for e in memory.access.log() if e.actor == "cli:token"} == {"token_created"}

    listing = ok(env, "token", "list")
    assert secret not in listing and as_json["secret"] not in listing
    lines = listing.splitlines()
    assert lines[0].split()[:5] == ["ID", "NAME", "SCOPE", "ROLE", "STATE"]
    assert any(token.id in line and "ana/coder" in line and "viewer" in line and "active" in line for line in lines)

    out = ok(env, "token", "revoke", token.id)
    assert f"Revoked {token.id}" in out
    listed = {t["id"]: t for t in json.loads(ok(env, "token", "list", "--json"))}
    assert listed[token.id]["revoked"] and not listed[token.id]["active"] and "secret" not in listed[token.id]
    assert listed[as_json["id"]]["active"]
    with opened(env) as memory:
        assert memory.access.verify_token(secret) is None
        assert memory.access.verify_token(as_json["secret"]) is not None
        assert "token_revoked" in {e.action for e in memory.access.log() if e.actor == "cli:token"}


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_bad_token_commands_are_refused_and_change_nothing(tmp_path):
    env = cli_env(tmp_path / "home")
    assert "no token with id 'tok_nope'" in refused(env, "token", "revoke", "tok_nope")
    for args, message in ((("--user", "../x", "--agent", "a"), "user_id must be"),
                          (("--user", "ana", "--agent", "a", "--role", "owner"), "invalid choice"),
                          (("--user", "ana", "--agent", "a", "--expires-days", "0"), "--expires-days must be between"),
                          (("--agent", "a"), "--user"),
                          ):
        done = run(env, "token", "create", "bot", *args)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert done.stdout == ""
    ok(env, "token", "create", "bot", "--user", "ana", "--agent", "a")
    again = run(env, "token", "create", "bot", "--user", "ana", "--agent", "a")
    assert again.returncode == 2 and "already named 'bot'" in again.stderr and again.stdout == ""
    assert "No tokens yet" not in ok(env, "token", "list")
    with opened(env) as memory:
        assert [t.name for t in memory.access.tokens()] == ["bot"]


def test_an_empty_list_says_how_to_make_one(tmp_path):
    assert "memory-core token create NAME" in ok(cli_env(tmp_path / "home"), "token", "list")
