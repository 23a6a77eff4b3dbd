"""The MCP server over HTTP with OAuth sign-in (`memory-core mcp --transport http --oauth`).

One ASGI app serves:
- `/mcp/{user_id}/{agent_name}`: the MCP endpoint for people signed in through OAuth. The access token
  names a person; their grants decide, at every request, their role on the scope of the URL (no role: 403,
  so a revoked grant stops the next call). Changes are recorded as `mcp:<e-mail>`. A session belongs to
  the person, the client and the scope that opened it.
- `/mcp`: static API tokens, exactly as without OAuth (`memory_core.mcp.http.BearerAuth`).
- the authorization server (the SDK's routes over `MemoryOAuthProvider`; registration bounded and rate-limited
  by `RegistrationGuard`), `/oauth/callback`, and the
  RFC 9728 metadata of every resource at `/.well-known/oauth-protected-resource/mcp/...`, naming it.
Every 401 carries `WWW-Authenticate: Bearer ..., resource_metadata="..."`; other `/.well-known/` paths are 404.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memory_core.policy.access import Principal
from memory_core.scope import Scope
from memory_core.mcp.discovery import PREFIX, WellKnown, challenge
from memory_core.mcp.http import PATH, BearerAuth, bearer_secret, max_body_bytes, request_view, token_owner
from memory_core.mcp.oauth import CALLBACK_PATH, SCOPE, Lifetimes, MemoryOAuthProvider, scope_of_resource
from memory_core.mcp.oidc import OidcConfig, Upstream, redact_in_logs
from memory_core.mcp.registration import RegistrationGuard
from memory_core.mcp.server import build_server
from memory_core.mcp.sessions import SessionCap

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Send
    from starlette.types import Scope as AsgiScope

    from memory_core.views.admin import Admin
    from memory_core.views.scoped import ScopedMemory

log = logging.getLogger(__name__)

RESOURCE_METADATA = PREFIX + "oauth-protected-resource"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
AUTH_PATHS = ("/authorize", "/token", "/register", "/revoke", CALLBACK_PATH)
_person: ContextVar[tuple[str, Scope] | None] = ContextVar("memory_core_mcp_person", default=None)


def person_view(admin: "Admin", otherwise: Callable[[], "ScopedMemory"]) -> Callable[[], "ScopedMemory"]:
    """The view of the person who signed the current request (their grants' role on the URL's scope, as
    `mcp:<e-mail>`), or `otherwise()` for a request signed by an API token."""

    def view() -> "ScopedMemory":
        signed = _person.get()
        if signed is None:
            return otherwise()
        email, scope = signed
        return admin.view_as(Principal.person(email), scope, actor=f"mcp:{email}")

    return view


def session_owner() -> str | None:
    """Whom the request in hand opens sessions for: the signed-in person (whatever the scope or client), or the
    API token at /mcp."""
    signed = _person.get()
    return f"person:{signed[0]}" if signed is not None else token_owner()


class PersonGate:
    """ASGI middleware for `/mcp/{user_id}/{agent_name}`: a live OAuth access token issued for this
    resource (or for none), a person with a role on the scope; the request then goes on to the MCP
    endpoint as if it had been made at /mcp."""

    def __init__(self, app: "ASGIApp", provider: MemoryOAuthProvider, admin: "Admin") -> None:
        self.app = app
        self.provider = provider
        self.admin = admin

    async def __call__(self, scope: "AsgiScope", receive: "Receive", send: "Send") -> None:
        path = scope["path"].rstrip("/")
        wanted = scope_of_resource(path)
        metadata = self.provider.issuer + RESOURCE_METADATA + path
        secret = bearer_secret(scope.get("headers", []))
        token = await self.provider.load_access_token(secret) if secret else None
        if token is None or wanted is None:
            await _deny(send, 401, challenge(metadata))
            return
        if token.resource and scope_of_resource(token.resource) not in (None, wanted):
            log.info("401: a token issued for %s used at %s", token.resource, path)
            await _deny(send, 401, challenge(metadata) + b', error="invalid_token", error_description="issued for '
                        b'another resource"')
            return
        email = token.subject or ""
        try:
            role = await anyio.to_thread.run_sync(self.admin.access.role, Principal.person(email), wanted)
        except ValueError:  # not an e-mail: never issued so, fail closed all the same
            role = None
        if role is None:
            log.info("403: %s has no role on %s", email, wanted.key)
            await _deny(send, 403, challenge(metadata) + b', error="insufficient_scope"')
            return
        user = AuthenticatedUser(AccessToken(token=(token.claims or {}).get("family", ""), client_id=token.client_id,
                                             scopes=[role], subject=f"{email} {wanted.key}",
                                             claims={"iss": self.provider.issuer}))
        inner = {**scope, "path": PATH, "raw_path": PATH.encode(), "user": user, "auth": AuthCredentials([role])}
        bound, authed = _person.set((email, wanted)), auth_context_var.set(user)
        try:
            await self.app(inner, receive, send)
        finally:
            auth_context_var.reset(authed)
            _person.reset(bound)


async def _deny(send: "Send", status: int, www_authenticate: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", b"0"), (b"www-authenticate", www_authenticate)]})
    await send({"type": "http.response.body", "body": b""})


def _resource_metadata(issuer: str) -> Callable:
    """RFC 9728 metadata of the resource at the path after the well-known prefix (/mcp or a scope's)."""

    async def handle(request: Request):
        path = request.url.path.removeprefix(RESOURCE_METADATA).rstrip("/") or PATH
        if path != PATH and scope_of_resource(path) is None:
            return Response(status_code=404)
        metadata = ProtectedResourceMetadata(resource=AnyHttpUrl(issuer + path), authorization_servers=[AnyHttpUrl(issuer)],
                                             scopes_supported=[SCOPE], resource_name="memory_core")
        return await ProtectedResourceMetadataHandler(metadata).handle(request)

    return handle


class OAuthRouter:
    """Sends each request to its part: discovery, the authorization server, `/mcp` (API tokens) or a
    scope's endpoint (OAuth)."""

    def __init__(self, api: "ASGIApp", people: "ASGIApp", auth: "ASGIApp") -> None:
        self.api, self.people, self.auth = api, people, auth
        self.discovery = WellKnown(api, auth, paths=(RESOURCE_METADATA, PREFIX + "oauth-authorization-server"))

    async def __call__(self, scope: "AsgiScope", receive: "Receive", send: "Send") -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path.startswith(PREFIX):
            await self.discovery(scope, receive, send)
        elif path in AUTH_PATHS:
            await self.auth(scope, receive, send)
        elif path.startswith(PATH + "/") and path.rstrip("/") != PATH:
            await self.people(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def public_host_security(issuer: str, host: str) -> TransportSecuritySettings | None:
    """Bound to a loopback address behind a TLS proxy, requests name the public host: the SDK's DNS-rebinding
    check (which it turns on for loopback binds) must accept that host too. None: the SDK's default."""
    parts = urlsplit(issuer)
    if host not in LOOPBACK or parts.hostname in LOOPBACK:
        return None
    loopback = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[f"{h}:*" for h in loopback] + [parts.netloc],
        allowed_origins=[f"http://{h}:*" for h in loopback] + [f"{parts.scheme}://{parts.netloc}"])


def oauth_http_app(admin: "Admin", config: OidcConfig, *, issuer: str, host: str = "127.0.0.1",
                   lifetimes: Lifetimes = Lifetimes()) -> OAuthRouter:
    """The whole app; `issuer` is the server's public base URL (https, or http on a loopback host)."""
    issuer = issuer.rstrip("/")
    redact_in_logs(config.client_secret)
    provider = MemoryOAuthProvider(admin, Upstream(config), issuer=issuer, lifetimes=lifetimes)
    server = build_server(person_view(admin, request_view(admin)), admin.settings)
    mcp_app = server.streamable_http_app(streamable_http_path=PATH, host=host, max_request_body_size=max_body_bytes(admin.settings),
                                         transport_security=public_host_security(issuer, host),
                                         session_idle_timeout=admin.settings.mcp_session_idle_seconds)
    routes = create_auth_routes(provider, AnyHttpUrl(issuer),  # type: ignore[arg-type]
                                client_registration_options=ClientRegistrationOptions(
                                    enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]),
                                revocation_options=RevocationOptions(enabled=True))
    routes += [Route(CALLBACK_PATH, endpoint=provider.callback, methods=["GET"]),
               Route(RESOURCE_METADATA + "{rest:path}", methods=["GET", "OPTIONS"],
                     endpoint=cors_middleware(_resource_metadata(issuer), ["GET", "OPTIONS"]))]
    # One cap for both ways in: at most mcp_sessions_per_token sessions per API token and per signed-in person.
    capped = SessionCap(mcp_app, admin.settings.mcp_sessions_per_token, admin.settings.mcp_session_idle_seconds,
                        owner=session_owner)
    api = BearerAuth(capped, admin.access.verify_token, cached=admin.access.cached_token,
                     challenge=challenge(issuer + RESOURCE_METADATA + PATH))
    auth = RegistrationGuard(Starlette(routes=routes), admin.settings.mcp_registrations_per_minute, admin.clock)
    return OAuthRouter(api, PersonGate(capped, provider, admin), auth)

