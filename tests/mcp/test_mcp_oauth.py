"""MCP over HTTP with OAuth sign-in, end to end: the real server in a subprocess (`memory-core mcp --transport
http --oauth`), the team's OIDC provider played by oidc-provider-mock, httpx driving the browser's redirects
(register, authorise with PKCE, sign in, token) and the MCP SDK's client calling tools with the token."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest
from mcp import MCPError

from memory_core import Memory, Settings
from memory_core.cli.main import main as cli_main
from tests.oidc_support import QUIET_PROVIDER_WARNINGS, register_client, serve_oidc_provider, set_user_claims
from tests.mcp.test_mcp import error_text, free_port, http_client, http_server_process, server_env, structured
from tests.mcp.test_mcp_roles import READING, TOOLS

pytestmark = [QUIET_PROVIDER_WARNINGS]
CLIENT_BACK = "http://127.0.0.1:9/callback"  # the MCP client's redirect URI: never fetched, only read


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("mcp-oauth")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with serve_oidc_provider() as issuer:
        client_id, client_secret = register_client(issuer, [f"{base}/oauth/callback"])
        for email, verified in (("ana@acme.com", True), ("vic@acme.com", True), ("eve@acme.com", True),
                                ("sam@acme.com", True), ("unverified@acme.com", False)):
            set_user_claims(issuer, email, {"email": email, "email_verified": verified})
        env = server_env(home / "home", oidc_client_id=client_id, oidc_client_secret=client_secret,
                         oidc_server_metadata_url=f"{issuer}/.well-known/openid-configuration",
                         mcp_registrations_per_minute="1000")  # this module registers many; the limit has its test
        memory = Memory(Settings.from_env(env))
        grants = {"ana": memory.access.grant("ana@acme.com", "editor", "ana/*"),
                  "ana-bob": memory.access.grant("ana@acme.com", "viewer", "bob/coder"),
                  "vic": memory.access.grant("vic@acme.com", "viewer", "ana/coder"),
                  "unverified": memory.access.grant("unverified@acme.com", "editor", "*/*"),
                  "sam": memory.access.grant("sam@acme.com", "viewer", "sam/*")}
        api_token, api_secret = memory.access.create_token("ci-bot", user_id="ana", agent_name="coder")
        log_path = home / "server.log"
        try:
            with http_server_process(env, log_path, port, "--oauth", "--log-level", "DEBUG") as proc:
                yield {"base": base, "memory": memory, "grants": grants, "proc": proc, "log": log_path,
                       "issuer": issuer, "api_secret": api_secret, "upstream_secret": client_secret}
        finally:
            memory.close(flush=False)
        text = log_path.read_text()
        assert client_secret not in text and api_secret not in text
        assert "Traceback" not in text, text[-3000:]


def register(base: str, **extra) -> dict:
    reply = httpx.post(f"{base}/register", json={"redirect_uris": [CLIENT_BACK], "client_name": "test client", **extra})
    assert reply.status_code == 201, reply.text
    return reply.json()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorise(base: str, client: dict, email: str, resource: str | None) -> tuple[dict, str]:
    """The browser's part: /authorize, the provider's form, our callback; returns the query the client's
    redirect URI receives, and the PKCE verifier."""
    verifier, challenge = pkce()
    params = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": CLIENT_BACK,
              "code_challenge": challenge, "code_challenge_method": "S256", "state": "st-1"}
    if resource:
        params["resource"] = resource
    with httpx.Client(timeout=30) as browser:
        to_provider = browser.get(f"{base}/authorize", params=params)
        assert to_provider.status_code == 302, to_provider.text
        form = to_provider.headers["location"]
        assert "code_challenge=" in form and "redirect_uri=" in form  # our own PKCE with the provider too
        assert browser.get(form).status_code == 200
        to_us = browser.post(form, data={"sub": email})
        assert to_us.status_code == 302 and to_us.headers["location"].startswith(f"{base}/oauth/callback?")
        to_client = browser.get(to_us.headers["location"])
        assert to_client.status_code == 302, to_client.text
        location = to_client.headers["location"]
    assert location.startswith(CLIENT_BACK)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}, verifier


def token(base: str, client: dict, **form) -> httpx.Response:
    return httpx.post(f"{base}/token", data={"client_id": client["client_id"], "client_secret": client["client_secret"],
                                             **form})


def signed_in(base: str, email: str, resource: str | None) -> tuple[dict, dict]:
    """Register, authorise with PKCE, exchange the code: (the client, its tokens)."""
    client = register(base)
    query, verifier = authorise(base, client, email, resource)
    assert query["state"] == "st-1" and "code" in query, query
    reply = token(base, client, grant_type="authorization_code", code=query["code"], redirect_uri=CLIENT_BACK,
                  code_verifier=verifier)
    assert reply.status_code == 200, reply.text
    return client, reply.json()


def test_discovery_metadata_and_challenges(oauth_server):
    base = oauth_server["base"]
    for path in ("/mcp/ana/coder", "/mcp"):
        denied = httpx.post(base + path, json={})
        assert denied.status_code == 401
        expected = f'resource_metadata="{base}/.well-known/oauth-protected-resource{path}"'
        assert denied.headers["www-authenticate"].startswith("Bearer ") and expected in denied.headers["www-authenticate"]
    resource = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp/ana/coder").json()
    assert resource["resource"] == f"{base}/mcp/ana/coder"
    assert [url.rstrip("/") for url in resource["authorization_servers"]] == [base]
    server = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert server["authorization_endpoint"] == f"{base}/authorize" and server["registration_endpoint"] == f"{base}/register"
    assert server["code_challenge_methods_supported"] == ["S256"] and "refresh_token" in server["grant_types_supported"]
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-protected-resource/elsewhere",
                 "/.well-known/security.txt"):
        assert httpx.get(base + path).status_code == 404, path


def test_full_flow_editor_viewer_other_scope_refresh_revoke(oauth_server):
    base, memory = oauth_server["base"], oauth_server["memory"]
    ana_url, bob_url = f"{base}/mcp/ana/coder", f"{base}/mcp/bob/coder"
    ana_client, ana = signed_in(base, "ana@acme.com", ana_url)
    assert ana["token_type"] == "Bearer" and 0 < ana["expires_in"] <= 3600 and ana["refresh_token"]
    _, vic = signed_in(base, "vic@acme.com", ana_url)
    _, ana_any = signed_in(base, "ana@acme.com", None)  # no resource named: the grants decide per URL

    async def scenario() -> None:
        async with http_client(ana_url, ana["access_token"], mode="legacy") as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            fact = structured(await client.call_tool("remember", {"content": "User likes jazz", "category": "preference"}))
            assert fact["stored"]
        async with http_client(ana_url, vic["access_token"]) as client:  # a viewer: reads, cannot write
            assert {t.name for t in (await client.list_tools()).tools} == READING
            assert "User likes jazz" in json.dumps(structured(await client.call_tool("list_facts", {})))
            assert "not allowed: the viewer role" in error_text(
                await client.call_tool("remember", {"content": "User likes tea", "category": "preference"}))
        async with http_client(bob_url, ana_any["access_token"], mode="legacy") as client:  # viewer of bob/coder
            assert {t.name for t in (await client.list_tools()).tools} == READING

    anyio.run(scenario)
    facts = memory.facts.list(user_id="ana", agent_name="coder")
    assert [f.content for f in facts] == ["User likes jazz"]
    assert memory.facts.history(facts[0].id)[0].actor == "mcp:ana@acme.com"
    assert "mcp_sign_in" in {e.action for e in memory.access.log() if e.actor == "mcp:ana@acme.com"}

    # ana's first token was issued for ana/coder only
    elsewhere = httpx.post(bob_url, json={}, headers={"Authorization": f"Bearer {ana['access_token']}"})
    assert elsewhere.status_code == 401 and 'error="invalid_token"' in elsewhere.headers["www-authenticate"]

    # another scope, no grant at all: 403 at the HTTP level, before any tool
    eve_scope = httpx.post(f"{base}/mcp/eve/coder", json={}, headers={"Authorization": f"Bearer {ana_any['access_token']}"})
    assert eve_scope.status_code == 403 and 'error="insufficient_scope"' in eve_scope.headers["www-authenticate"]

    # refresh: a new access token works, the old refresh token is spent
    refreshed = token(base, ana_client, grant_type="refresh_token", refresh_token=ana["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text

    async def with_refreshed() -> None:
        async with http_client(ana_url, refreshed.json()["access_token"], mode="legacy") as client:
            assert structured(await client.call_tool("list_facts", {}))["count"] == 1

    anyio.run(with_refreshed)  # (presented again, the old one is a replay: test_a_replayed_refresh_token_...)

    # a revoked grant stops the viewer's next call
    async def revoked_grant() -> None:
        async with http_client(ana_url, vic["access_token"], mode="legacy") as client:
            structured(await client.call_tool("list_facts", {}))
            memory.access.revoke(oauth_server["grants"]["vic"].id)
            with pytest.raises(MCPError):
                await client.call_tool("list_facts", {})

    anyio.run(revoked_grant)
    assert httpx.post(ana_url, json={}, headers={"Authorization": f"Bearer {vic['access_token']}"}).status_code == 403

    # revoking a token (RFC 7009) ends its sign-in: the access token and its refresh token
    new = refreshed.json()
    assert httpx.post(f"{base}/revoke", data={"token": new["access_token"], "client_id": ana_client["client_id"],
                                              "client_secret": ana_client["client_secret"]}).status_code == 200
    assert httpx.post(ana_url, json={}, headers={"Authorization": f"Bearer {new['access_token']}"}).status_code == 401
    assert token(base, ana_client, grant_type="refresh_token", refresh_token=new["refresh_token"]).status_code == 400


def test_refused_sign_ins_and_bad_exchanges(oauth_server):
    base = oauth_server["base"]
    client = register(base)
    query, _ = authorise(base, client, "unverified@acme.com", f"{base}/mcp/ana/coder")
    assert query["error"] == "access_denied" and "not verified" in query["error_description"] and "code" not in query
    query, _ = authorise(base, client, "eve@acme.com", f"{base}/mcp/ana/coder")  # no grant on ana/coder
    assert query["error"] == "access_denied" and "no access to ana/coder" in query["error_description"]

    query, verifier = authorise(base, client, "ana@acme.com", f"{base}/mcp/ana/coder")
    wrong = token(base, client, grant_type="authorization_code", code=query["code"], redirect_uri=CLIENT_BACK,
                  code_verifier=pkce()[0])  # not the verifier of this challenge
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    other = register(base)
    stolen = token(base, other, grant_type="authorization_code", code=query["code"], redirect_uri=CLIENT_BACK,
                   code_verifier=verifier)
    assert stolen.status_code == 400  # another client's code
    good = token(base, client, grant_type="authorization_code", code=query["code"], redirect_uri=CLIENT_BACK,
                 code_verifier=verifier)
    assert good.status_code == 200
    reused = token(base, client, grant_type="authorization_code", code=query["code"], redirect_uri=CLIENT_BACK,
                   code_verifier=verifier)
    assert reused.status_code == 400  # a code is used once

    with httpx.Client() as browser:  # /mcp takes API tokens: a sign-in for it is refused before the provider
        verifier, challenge = pkce()
        refused = browser.get(f"{base}/authorize", params={
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": CLIENT_BACK, "state": "s",
            "code_challenge": challenge, "code_challenge_method": "S256", "resource": f"{base}/mcp"})
    assert refused.status_code == 302 and refused.headers["location"].startswith(CLIENT_BACK)
    assert "error=invalid_request" in refused.headers["location"] and "user_id" in refused.headers["location"]

    stale = httpx.get(f"{base}/oauth/callback", params={"state": "made-up", "code": "x"})
    assert stale.status_code == 400 and "start again" in stale.text
    assert httpx.post(f"{base}/mcp/ana/coder", json={}, headers={"Authorization": "Bearer mca_made-up"}).status_code == 401


def bearer(url: str, access_token: str) -> int:
    return httpx.post(url, json={}, headers={"Authorization": f"Bearer {access_token}"}).status_code


def test_a_replayed_refresh_token_revokes_its_whole_family(oauth_server):
    """Issue 32: a replayed refresh token was refused, but the tokens that replaced it kept working. OAuth 2.1:
    refresh token reuse revokes the whole family (a thief and the client cannot both go on)."""
    base = oauth_server["base"]
    url = f"{base}/mcp/ana/coder"
    client, first = signed_in(base, "ana@acme.com", url)
    second = token(base, client, grant_type="refresh_token", refresh_token=first["refresh_token"]).json()
    third = token(base, client, grant_type="refresh_token", refresh_token=second["refresh_token"]).json()
    assert bearer(url, third["access_token"]) != 401
    _, other = signed_in(base, "ana@acme.com", url)  # another sign-in of the same person: untouched

    replay = token(base, client, grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert bearer(url, third["access_token"]) == 401  # what replaced it is revoked too
    assert token(base, client, grant_type="refresh_token", refresh_token=third["refresh_token"]).status_code == 400
    assert bearer(url, other["access_token"]) != 401
    assert "mcp_token_revoked" in {e.action for e in oauth_server["memory"].access.log()}


def test_a_replayed_code_revokes_the_tokens_it_issued(oauth_server):
    """Issue 32 / RFC 6749 4.1.2: a code used twice is refused and what it issued is revoked."""
    base = oauth_server["base"]
    url = f"{base}/mcp/ana/coder"
    client = register(base)
    query, verifier = authorise(base, client, "ana@acme.com", url)
    form = dict(grant_type="authorization_code", code=query["code"], redirect_uri=CLIENT_BACK, code_verifier=verifier)
    issued = token(base, client, **form).json()
    refreshed = token(base, client, grant_type="refresh_token", refresh_token=issued["refresh_token"]).json()
    assert bearer(url, refreshed["access_token"]) != 401
    replay = token(base, client, **form)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert bearer(url, issued["access_token"]) == 401 and bearer(url, refreshed["access_token"]) == 401
    assert token(base, client, grant_type="refresh_token", refresh_token=refreshed["refresh_token"]).status_code == 400


@pytest.mark.parametrize("resource", ["https://evil.example/mcp/ana/coder", "http://127.0.0.1:9/mcp/ana/coder",
                                      "{base}/mcp/ana/coder?x=1"])
def test_a_resource_that_is_not_this_server_gets_no_code(oauth_server, resource):
    base = oauth_server["base"]
    client = register(base)
    verifier, challenge = pkce()
    with httpx.Client() as browser:
        refused = browser.get(f"{base}/authorize", params={
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": CLIENT_BACK, "state": "s",
            "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource.format(base=base)})
    assert refused.status_code == 302 and refused.headers["location"].startswith(CLIENT_BACK)
    query = parse_qs(urlsplit(refused.headers["location"]).query)
    assert query["error"] == ["invalid_target"] and "code" not in query  # never sent on to the provider


def test_registration_bodies_and_redirect_uris_are_bounded(oauth_server):
    base = oauth_server["base"]
    many = [f"http://127.0.0.1:9/cb/{i}" for i in range(50_000)]  # the 3 MB body
    huge = httpx.post(f"{base}/register", json={"redirect_uris": many, "client_name": "x"})
    assert huge.status_code == 400 and huge.json()["error"] == "invalid_client_metadata"
    assert "65,536 bytes" in huge.json()["error_description"]
    eleven = httpx.post(f"{base}/register", json={"redirect_uris": many[:11], "client_name": "x"})
    assert eleven.status_code == 400 and eleven.json()["error"] == "invalid_redirect_uri"
    assert "at most 10" in eleven.json()["error_description"]
    assert register(base, redirect_uris=many[:10])["client_id"]  # within the bounds


def test_static_api_tokens_keep_working_at_mcp(oauth_server):
    async def scenario() -> None:
        async with http_client(f"{oauth_server['base']}/mcp", oauth_server["api_secret"], mode="legacy") as client:
            remembered = structured(await client.call_tool("remember", {"content": "User uses vim", "category": "preference"}))
            assert remembered["stored"]

    anyio.run(scenario)
    fact = next(f for f in oauth_server["memory"].facts.list(user_id="ana", agent_name="coder") if f.content == "User uses vim")
    assert oauth_server["memory"].facts.history(fact.id)[0].actor == "mcp:ci-bot"
    # an API token is not an OAuth token: it opens /mcp only
    denied = httpx.post(f"{oauth_server['base']}/mcp/ana/coder", json={},
                        headers={"Authorization": f"Bearer {oauth_server['api_secret']}"})
    assert denied.status_code == 401


def test_one_person_cannot_hold_every_session(oauth_server):
    """mcp_sessions_per_token (20) holds for a signed-in person across scopes and clients, as for an API token."""
    from tests.mcp.test_mcp_limits import open_session

    base = oauth_server["base"]
    _, sam = signed_in(base, "sam@acme.com", None)
    _, sam_again = signed_in(base, "sam@acme.com", None)  # another client of the same person
    _, ana = signed_in(base, "ana@acme.com", None)
    with httpx.Client(timeout=30) as http:
        opened = [open_session(http, f"{base}/mcp/sam/{'bot' if i % 2 else 'coder'}", sam["access_token"])
                  for i in range(20)]
        assert [r.status_code for r in opened] == [200] * 20
        refused = open_session(http, f"{base}/mcp/sam/bot", sam_again["access_token"])
        assert refused.status_code == 429 and "Too many open sessions" in refused.text
        assert "mcp-session-id" not in refused.headers
        assert open_session(http, f"{base}/mcp/ana/coder", ana["access_token"]).status_code == 200  # others still can
        ended = http.delete(f"{base}/mcp/sam/coder", headers={
            "Authorization": f"Bearer {sam['access_token']}", "mcp-session-id": opened[0].headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18"})
        assert ended.status_code == 200
        assert open_session(http, f"{base}/mcp/sam/bot", sam_again["access_token"]).status_code == 200


def test_cli_refuses_oauth_without_its_settings(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMORY_CORE_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # no .streamlit/secrets.toml here
    for argv, message in ((["mcp", "--transport", "http", "--oauth"], "missing: client_id"),
                          (["mcp", "--oauth"], "are for --transport http"),
                          (["mcp", "--transport", "http", "--public-url", "https://m.acme.com"], "go with --oauth"),
                          (["mcp", "--transport", "http", "--oauth", "--secrets", str(tmp_path / "none.toml")],
                           "no such file"),
                          (["mcp", "--transport", "http", "--oauth", "--host", "0.0.0.0"], "needs --public-url")):
        with pytest.raises(SystemExit) as exit_:
            cli_main(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err, argv
    secrets_file = tmp_path / "secrets.toml"
    secrets_file.write_text('[auth]\nclient_id = "cid"\nclient_secret = "sshh-very-secret"\n')
    with pytest.raises(SystemExit):
        cli_main(["mcp", "--transport", "http", "--oauth", "--secrets", str(secrets_file)])
    err = capsys.readouterr().err
    assert "missing: server_metadata_url" in err and "sshh-very-secret" not in err


def test_the_sdks_own_oauth_client_discovers_signs_in_and_calls_tools(oauth_server):
    """What Claude's or the Inspector's connector does, through the MCP SDK's OAuthClientProvider: a 401,
    the RFC 9728 and RFC 8414 documents, registration, PKCE, sign-in, token, then the tools."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    url = f"{oauth_server['base']}/mcp/ana/sdk"
    came_back: dict = {}

    class Memo:
        tokens = client = None

        async def get_tokens(self):
            return self.tokens

        async def set_tokens(self, tokens):
            self.tokens = tokens

        async def get_client_info(self):
            return self.client

        async def set_client_info(self, info):
            self.client = info

    def browse(authorization_url: str) -> None:  # the person's browser: the provider's form, then back
        with httpx.Client(timeout=30) as browser:
            form = browser.get(authorization_url).headers["location"]
            to_us = browser.post(form, data={"sub": "ana@acme.com"})
            location = browser.get(to_us.headers["location"]).headers["location"]
        came_back.update({k: v[0] for k, v in parse_qs(urlsplit(location).query).items()})

    async def redirect(authorization_url: str) -> None:
        await anyio.to_thread.run_sync(browse, authorization_url)

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=came_back["code"], state=came_back.get("state"))

    auth = OAuthClientProvider(url, OAuthClientMetadata(redirect_uris=[CLIENT_BACK], client_name="sdk"), Memo(),
                               redirect_handler=redirect, callback_handler=callback)

    async def scenario() -> None:
        async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=60)) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                assert structured(await client.call_tool("remember", {"content": "User signs in with the SDK",
                                                                      "category": "context"}))["stored"]

    anyio.run(scenario)
    fact = oauth_server["memory"].facts.list(user_id="ana", agent_name="sdk")[0]
    assert fact.content == "User signs in with the SDK"
    assert oauth_server["memory"].facts.history(fact.id)[0].actor == "mcp:ana@acme.com"


def test_behind_a_tls_proxy_the_public_host_is_accepted():
    from memory_core.mcp.oauth_http import public_host_security

    security = public_host_security("https://memory.acme.com", "127.0.0.1")
    assert "memory.acme.com" in security.allowed_hosts and "https://memory.acme.com" in security.allowed_origins
    assert "127.0.0.1:*" in security.allowed_hosts
    assert public_host_security("http://127.0.0.1:8000", "127.0.0.1") is None  # the SDK's own loopback check
    assert public_host_security("https://memory.acme.com", "0.0.0.0") is None  # not bound to loopback: none
