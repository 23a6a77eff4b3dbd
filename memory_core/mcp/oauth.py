"""MCP's OAuth authorization server: the MCP SDK's handlers (metadata, registration, authorize, token,
revoke; PKCE checked by them) over `MemoryOAuthProvider`, which signs the person in at the team's OIDC
provider and keeps clients, codes and tokens in the database (hashed).

The flow: a client registers (RFC 7591), sends the person to /authorize with a PKCE challenge and the
resource it wants (`/mcp/{user_id}/{agent_name}`); the person signs in at the OIDC provider, which sends
them back to /oauth/callback; there the verified e-mail is read, the person's grants must give them a role
on the resource's scope, and the client gets a code, then short-lived access tokens with rotating refresh
tokens. A token names a person, never a role: their grants decide at every request (memory_core.mcp.oauth_http).
Codes and tokens are stored as hashes; a registered client's record holds its client secret as issued (the
SDK's token endpoint compares it), which is worth little alone: every sign-in still needs PKCE and the person.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken, AuthorizationCode, AuthorizationParams, AuthorizeError, RefreshToken, RegistrationError, TokenError,
    construct_redirect_uri)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from memory_core.policy.access import Principal, hash_secret, normalise_email
from memory_core.clock import utc
from memory_core.scope import Scope, make_scope
from memory_core.store.oauth_store import OAuthStore
from memory_core.mcp.oidc import SignInError, Upstream, pkce_pair, verified_email

if TYPE_CHECKING:
    from memory_core.views.admin import Admin

log = logging.getLogger(__name__)

CALLBACK_PATH = "/oauth/callback"
SCOPE = "memory"  # the one OAuth scope; what a token may do is the person's grants, read at every request
MAX_CLIENTS = 10_000
UNUSED_CLIENT_TTL = timedelta(days=1)  # a client that got no token within this is gone (pruned on registration)


@dataclass(frozen=True)
class Lifetimes:
    access: timedelta = timedelta(minutes=15)
    refresh: timedelta = timedelta(days=30)
    code: timedelta = timedelta(minutes=5)
    sign_in: timedelta = timedelta(minutes=10)


def scope_of_resource(resource: str | None) -> Scope | None:
    """The scope a resource URL names (`.../mcp/{user_id}/{agent_name}`), or None."""
    if not resource:
        return None
    parts = urlsplit(resource).path.strip("/").split("/")
    if len(parts) != 3 or parts[0] != "mcp":
        return None
    try:
        return make_scope(parts[1], parts[2])
    except ValueError:
        return None


class MemoryOAuthProvider:
    """The SDK's `OAuthAuthorizationServerProvider`, over the memory's database and the OIDC provider."""

    def __init__(self, admin: "Admin", upstream: Upstream, *, issuer: str, lifetimes: Lifetimes = Lifetimes()) -> None:
        self.admin = admin
        self.upstream = upstream
        self.issuer = issuer.rstrip("/")
        self.lifetimes = lifetimes
        self.store = OAuthStore(admin.db, admin.clock)

    @property
    def callback_url(self) -> str:
        return self.issuer + CALLBACK_PATH

    # -- clients ------------------------------------------------------------------------------------

    def _unused_before(self):
        return self.admin.clock.now() - UNUSED_CLIENT_TTL

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        info = await anyio.to_thread.run_sync(self.store.client, client_id[:64], self._unused_before())
        return OAuthClientInformationFull.model_validate_json(info) if info else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        def save() -> None:
            if not self.store.save_client(client_info.client_id or "", client_info.model_dump_json(),
                                          max_clients=MAX_CLIENTS, unused_before=self._unused_before()):
                raise RegistrationError("invalid_client_metadata", "this server has too many registered clients")
        await anyio.to_thread.run_sync(save)
        log.info("OAuth client registered: %s (%s)", client_info.client_id, (client_info.client_name or "")[:80])

    def names_this_server(self, resource: str) -> bool:
        """Whether a resource indicator (RFC 8707) is a URL of this server: its scheme and host, no query or
        fragment."""
        try:
            wanted, ours = urlsplit(resource), urlsplit(self.issuer)
        except ValueError:
            return False
        return (wanted.scheme.lower(), wanted.netloc.lower()) == (ours.scheme.lower(), ours.netloc.lower()) \
            and not wanted.query and not wanted.fragment

    # -- authorization: off to the OIDC provider, and back ------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource and not self.names_this_server(params.resource):
            raise AuthorizeError("invalid_target", f"resource must be this server's {self.issuer}/mcp/{{user_id}}/"
                                                   "{agent_name}, or absent")
        if params.resource and scope_of_resource(params.resource) is None:
            # /mcp itself takes API tokens only: a sign-in names the memory it is for.
            raise AuthorizeError("invalid_request", f"connect to {self.issuer}/mcp/{{user_id}}/{{agent_name}}: "
                                                    "the URL names the memory to sign in to")
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(16)
        verifier, challenge = pkce_pair()
        data = json.dumps({"client_id": client.client_id, "params": params.model_dump(mode="json"), "verifier": verifier})

        def start() -> str:
            self.store.add(hash_secret(state), "sign_in", secrets.token_hex(16), client.client_id or "", None, data,
                           self.admin.clock.now() + self.lifetimes.sign_in)
            return self.upstream.authorize_url(redirect_uri=self.callback_url, state=state, challenge=challenge,
                                               nonce=nonce)
        try:
            return await anyio.to_thread.run_sync(start)
        except SignInError as exc:
            raise AuthorizeError("temporarily_unavailable", str(exc)) from None

    async def callback(self, request: Request) -> Response:
        """The OIDC provider's redirect: who signed in, then a code for the client (or an error for it)."""
        state, code = request.query_params.get("state"), request.query_params.get("code")
        if not state or len(state) > 256:
            return PlainTextResponse("This sign-in link is incomplete; start again from your MCP client.", 400)
        pending = await anyio.to_thread.run_sync(self.store.take, hash_secret(state), "sign_in")
        if pending is None:
            return PlainTextResponse("This sign-in has expired or was used already; start again from your MCP "
                                     "client.", 400)
        saved = json.loads(pending.data)
        params = AuthorizationParams.model_validate(saved["params"])
        back = str(params.redirect_uri)

        def refuse(error: str, description: str) -> Response:
            return RedirectResponse(construct_redirect_uri(back, error=error, error_description=description,
                                                           state=params.state), 302, headers={"Cache-Control": "no-store"})
        if not code:
            return refuse("access_denied", "the sign-in was cancelled or refused")
        try:
            claims = await anyio.to_thread.run_sync(lambda: self.upstream.identify(
                code=code[:2048], verifier=saved["verifier"], redirect_uri=self.callback_url))
            email = normalise_email(verified_email(claims))
        except (SignInError, ValueError) as exc:
            log.info("MCP sign-in refused: %s", exc)
            return refuse("access_denied", str(exc))
        wanted = scope_of_resource(params.resource)
        if wanted is not None and self.admin.access.role(Principal.person(email), wanted) is None:
            log.info("MCP sign-in of %s refused: no grant on %s", email, wanted.key)
            return refuse("access_denied", f"{email} has no access to {wanted.key}; ask an admin for a grant")
        ours = "mcc_" + secrets.token_urlsafe(32)
        record = {"scopes": params.scopes or [SCOPE], "code_challenge": params.code_challenge, "redirect_uri": back,
                  "redirect_uri_provided_explicitly": params.redirect_uri_provided_explicitly,
                  "resource": params.resource}

        def issue() -> None:
            self.store.add(hash_secret(ours), "code", secrets.token_hex(16), saved["client_id"], email,
                           json.dumps(record), self.admin.clock.now() + self.lifetimes.code)
            with self.admin.acting_as(f"mcp:{email}"):
                self.admin.access.record("mcp_sign_in", client=saved["client_id"],
                                          scope=wanted.key if wanted else "(none named)")
        await anyio.to_thread.run_sync(issue)
        log.info("MCP sign-in of %s for client %s", email, saved["client_id"])
        return RedirectResponse(construct_redirect_uri(back, code=ours, state=params.state), 302,
                                headers={"Cache-Control": "no-store"})

    # -- codes and tokens ---------------------------------------------------------------------------

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> AuthorizationCode | None:
        row = await anyio.to_thread.run_sync(self.store.get, hash_secret(authorization_code[:256]), "code")
        if row is None:
            await self._replay(hash_secret(authorization_code[:256]), "code")
            return None
        if row.client_id != client.client_id:
            return None
        data = json.loads(row.data)
        return AuthorizationCode(code=authorization_code, scopes=data["scopes"], expires_at=utc(row.expires_at).timestamp(),
                                 client_id=row.client_id, code_challenge=data["code_challenge"],
                                 redirect_uri=data["redirect_uri"], resource=data["resource"], subject=row.email,
                                 redirect_uri_provided_explicitly=data["redirect_uri_provided_explicitly"])

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode) -> OAuthToken:
        row = await anyio.to_thread.run_sync(self.store.spend, hash_secret(authorization_code.code), "code")
        if row is None:
            raise TokenError("invalid_grant", "the code was used already or has expired")
        # The tokens join the code's family: a replay of the code revokes them (RFC 6749 4.1.2).
        issued = await self._issue(client.client_id or "", row.email or "", authorization_code.scopes,
                                   authorization_code.resource, row.family)
        await anyio.to_thread.run_sync(self.store.mark_used, client.client_id or "")
        return issued

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        row = await anyio.to_thread.run_sync(self.store.get, hash_secret(refresh_token[:256]), "refresh")
        if row is None:
            await self._replay(hash_secret(refresh_token[:256]), "refresh")
            return None
        if row.client_id != client.client_id:
            return None
        data = json.loads(row.data)
        return RefreshToken(token=refresh_token, client_id=row.client_id, scopes=data["scopes"], subject=row.email,
                            expires_at=int(utc(row.expires_at).timestamp()), resource=data["resource"])

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        row = await anyio.to_thread.run_sync(self.store.spend, hash_secret(refresh_token.token), "refresh")
        if row is None:
            raise TokenError("invalid_grant", "the refresh token was used already, revoked or has expired")
        return await self._issue(row.client_id, row.email or "", scopes or refresh_token.scopes,
                                 refresh_token.resource, row.family)

    async def _replay(self, token_hash: str, kind: str) -> None:
        """A spent code or refresh token presented again: what it issued is revoked (its whole family)."""
        row = await anyio.to_thread.run_sync(self.store.replayed, token_hash, kind)
        if row is None:
            return
        log.warning("OAuth %s replayed for client %s: its sign-in's tokens are revoked", kind, row.client_id)

        def record() -> None:
            with self.admin.acting_as(f"mcp:{row.email}"):
                self.admin.access.record("mcp_token_revoked", client=row.client_id, reason=f"{kind} replayed")
        await anyio.to_thread.run_sync(record)

    async def load_access_token(self, token: str) -> AccessToken | None:
        row = await anyio.to_thread.run_sync(self.store.get, hash_secret(token[:256]), "access")
        if row is None:
            return None
        data = json.loads(row.data)
        return AccessToken(token=token, client_id=row.client_id, scopes=data["scopes"], subject=row.email,
                           expires_at=int(utc(row.expires_at).timestamp()), resource=data["resource"],
                           claims={"iss": self.issuer, "family": row.family})

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """Revoke the whole sign-in the token belongs to (its access and refresh tokens)."""
        kind = "refresh" if isinstance(token, RefreshToken) else "access"
        row = await anyio.to_thread.run_sync(self.store.get, hash_secret(token.token), kind)
        if row is None:
            return

        def revoke() -> None:
            self.store.revoke_family(row.family)
            with self.admin.acting_as(f"mcp:{row.email}"):
                self.admin.access.record("mcp_token_revoked", client=row.client_id)
        await anyio.to_thread.run_sync(revoke)

    async def _issue(self, client_id: str, email: str, scopes: list[str], resource: str | None, family: str) -> OAuthToken:
        access, refresh = "mca_" + secrets.token_urlsafe(32), "mcr_" + secrets.token_urlsafe(32)
        data = json.dumps({"scopes": scopes, "resource": resource})

        def save() -> None:
            now = self.admin.clock.now()
            self.store.add(hash_secret(access), "access", family, client_id, email, data, now + self.lifetimes.access)
            self.store.add(hash_secret(refresh), "refresh", family, client_id, email, data, now + self.lifetimes.refresh)
        await anyio.to_thread.run_sync(save)
        return OAuthToken(access_token=access, expires_in=int(self.lifetimes.access.total_seconds()),
                          scope=" ".join(scopes), refresh_token=refresh)
