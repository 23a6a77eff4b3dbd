"""The team's OIDC provider, as MCP's OAuth sign-in uses it: the same settings as the dashboard's `[auth]`.

`OidcConfig.load` reads `client_id`, `client_secret` and `server_metadata_url` from the `[auth]` table of a
Streamlit secrets file (default `.streamlit/secrets.toml`), each overridden by MEMORY_CORE_OIDC_CLIENT_ID,
MEMORY_CORE_OIDC_CLIENT_SECRET, MEMORY_CORE_OIDC_SERVER_METADATA_URL. `Upstream` runs the authorization
code flow with PKCE against it (httpx, blocking: call it from a worker thread) and reads who signed in from
its userinfo endpoint, which answers over the provider's own TLS connection, so no token signature needs
checking here.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlencode, urlsplit

import httpx

log = logging.getLogger(__name__)

ENV = {"client_id": "MEMORY_CORE_OIDC_CLIENT_ID", "client_secret": "MEMORY_CORE_OIDC_CLIENT_SECRET",
       "server_metadata_url": "MEMORY_CORE_OIDC_SERVER_METADATA_URL"}
DEFAULT_SECRETS = Path(".streamlit") / "secrets.toml"
SCOPES = "openid email profile"


class SignInError(Exception):
    """The provider refused or failed the sign-in; the message is safe to show the person."""


@dataclass(frozen=True)
class OidcConfig:
    client_id: str
    client_secret: str = field(repr=False)
    server_metadata_url: str

    @classmethod
    def load(cls, secrets_file: Path | str | None = None, environ: Mapping[str, str] | None = None) -> "OidcConfig":
        """The settings from the secrets file's [auth] table and the environment (which wins); ValueError
        naming what is missing (never a value)."""
        environ = os.environ if environ is None else environ
        table: dict[str, Any] = {}
        path = Path(secrets_file) if secrets_file is not None else DEFAULT_SECRETS
        if path.is_file():
            table = _auth_table(path)
        elif secrets_file is not None:
            raise ValueError(f"--secrets: no such file: {path}")
        values = {name: environ.get(var) or table.get(name) for name, var in ENV.items()}
        missing = [f"{name} ({ENV[name]})" for name, value in values.items() if not isinstance(value, str) or not value]
        if missing:
            raise ValueError(f"--oauth needs the OIDC provider's settings ([auth] of {path}, or the environment); "
                             f"missing: {', '.join(missing)}")
        url = urlsplit(values["server_metadata_url"])
        if url.scheme not in ("http", "https") or not url.netloc:
            raise ValueError("server_metadata_url must be an http(s) URL")
        return cls(**values)


def oauth_settings(oauth: bool, *, secrets: str | None, public_url: str | None, host: str) -> OidcConfig | None:
    """The command line's --oauth, --secrets and --public-url, checked before anything starts: the OIDC
    settings, or None without --oauth; ValueError for a misuse."""
    if not oauth:
        if secrets or public_url:
            raise ValueError("--secrets and --public-url go with --oauth")
        return None
    if public_url is not None:
        url = urlsplit(public_url)
        if url.scheme not in ("http", "https") or not url.netloc or url.query or url.fragment or url.path.strip("/"):
            raise ValueError("--public-url must be the server's base URL, e.g. https://memory.acme.com")
    elif host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError("--oauth beyond this machine needs --public-url https://... (OAuth needs TLS in front)")
    return OidcConfig.load(secrets)


def _auth_table(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {type(exc).__name__}") from None  # its text may hold secrets
    auth = data.get("auth")
    return auth if isinstance(auth, dict) else {}


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class Upstream:
    """The OIDC provider: where to send the person, and who came back."""

    def __init__(self, config: OidcConfig, *, timeout: float = 15.0) -> None:
        self.config = config
        self.timeout = timeout
        self._metadata: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def metadata(self) -> dict[str, Any]:
        with self._lock:
            if self._metadata is None:
                try:
                    reply = httpx.get(self.config.server_metadata_url, timeout=self.timeout)
                    reply.raise_for_status()
                    found = reply.json()
                except (httpx.HTTPError, ValueError) as exc:
                    raise SignInError(f"the sign-in provider cannot be reached ({type(exc).__name__})") from None
                needed = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint")
                if not isinstance(found, dict) or not all(isinstance(found.get(k), str) for k in needed):
                    raise SignInError("the sign-in provider's metadata lacks an endpoint it needs")
                self._metadata = found
            return self._metadata

    def authorize_url(self, *, redirect_uri: str, state: str, challenge: str, nonce: str) -> str:
        query = urlencode({"response_type": "code", "client_id": self.config.client_id, "redirect_uri": redirect_uri,
                           "scope": SCOPES, "state": state, "nonce": nonce, "code_challenge": challenge,
                           "code_challenge_method": "S256"})
        endpoint = self.metadata()["authorization_endpoint"]
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"

    def identify(self, *, code: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
        """Exchange the provider's code (with the PKCE verifier), then read the person's claims."""
        meta = self.metadata()
        try:
            reply = httpx.post(meta["token_endpoint"], timeout=self.timeout,
                               auth=(self.config.client_id, self.config.client_secret),
                               data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                                     "code_verifier": verifier})
            if reply.status_code != 200:
                log.warning("the sign-in provider refused the code exchange: HTTP %s", reply.status_code)
                raise SignInError("the sign-in provider refused the sign-in")
            access = reply.json().get("access_token")
            if not isinstance(access, str):
                raise SignInError("the sign-in provider sent no access token")
            info = httpx.get(meta["userinfo_endpoint"], timeout=self.timeout,
                             headers={"Authorization": f"Bearer {access}"})
            info.raise_for_status()
            claims = info.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SignInError(f"the sign-in provider cannot be reached ({type(exc).__name__})") from None
        if not isinstance(claims, dict):
            raise SignInError("the sign-in provider sent no claims")
        return claims


def verified_email(claims: Mapping[str, Any]) -> str:
    """The e-mail of the claims, if the provider says it is verified; SignInError otherwise."""
    email = claims.get("email")
    if not isinstance(email, str) or not email:
        raise SignInError("the sign-in provider did not share an e-mail address")
    if claims.get("email_verified") is not True:
        raise SignInError("the e-mail address is not verified by the sign-in provider")
    return email


def redact_in_logs(secret: str) -> None:
    """Add `secret` to what the installed log redaction scrubs (memory_core.text.redact)."""
    from memory_core.text.redact import RedactingFilter

    for handler in logging.getLogger().handlers:
        for flt in handler.filters:
            if isinstance(flt, RedactingFilter) and secret not in flt.secrets:
                flt.secrets.append(secret)
