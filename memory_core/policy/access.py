"""Who may do what, decided in one place: roles per scope pattern, API tokens, anonymous visitors.

Roles, weakest first: `viewer` reads, `editor` also changes memory, `admin` also manages access, tokens
and the worker's switches. A grant gives a role to an e-mail address or a whole domain ("@acme.com") on a
scope pattern ("ana/*", "*/coder", "*/*"); `Settings.admins` are admin on every scope. Pages and the MCP
server never check roles themselves: they hold a view from `Memory.view()` (a `ScopedMemory` bound to one
scope and the role `Access.role()` gives there), and the view refuses what the role does not allow. Access
is policy only: it makes no views and knows nothing of Memory.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Iterable, Protocol

from memory_core.store.actors import current_actor
from memory_core.clock import utc
from memory_core.errors import MemoryCoreError
from memory_core.policy.roles import ACTIONS, ROLES, enough, rank, strongest, validate_role  # noqa: F401  (re-exported)
from memory_core.scope import Scope, make_scope, validate_name
from memory_core.store.access_store import AccessStore
from memory_core.store.models import ApiTokenRow, GrantRow
from memory_core.text.validation import check_text

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.settings import Settings
    from memory_core.store.db import Database

ANONYMOUS_MODES = ("full", "sandbox", "none")
TOKEN_PREFIX = "mc_"
_EMAIL = re.compile(r"[^@\s/]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z0-9\-]{1,63}")
_DOMAIN = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z0-9\-]{1,63}")
_PATTERN_PART = re.compile(r"[A-Za-z0-9_.\-*]{1,64}")
_TOUCH_EVERY = timedelta(minutes=1)  # a token's last use is written at most this often
# Verified tokens are kept in memory for Settings.token_cache_seconds (at most TOKEN_CACHE_SIZE of them), so that
# a request costs no SQL: revoking in this process takes effect at once, in another process (the CLI) within
# that time; expiry is checked on every request.
TOKEN_CACHE_SIZE = 1024


def normalise_email(email: object) -> str:
    if not isinstance(email, str) or not _EMAIL.fullmatch(email.strip()):
        raise ValueError(f"not an e-mail address: {email!r:.80}")
    return email.strip().lower()


def validate_subject(subject: object) -> str:
    """An e-mail address ("ana@acme.com") or a domain ("@acme.com"), lowercased."""
    if isinstance(subject, str) and _DOMAIN.fullmatch(subject.strip()):
        return subject.strip().lower()
    if isinstance(subject, str) and _EMAIL.fullmatch(subject.strip()):
        return subject.strip().lower()
    raise ValueError(f"subject must be an e-mail address (ana@acme.com) or a domain (@acme.com); got {subject!r:.80}")


def validate_pattern(scope: object) -> str:
    """A scope pattern "user/agent": each part a scope name or a glob with `*`."""
    if not isinstance(scope, str) or scope.count("/") != 1:
        raise ValueError(f"scope must be 'user/agent' (each part a name or a '*' glob); got {scope!r:.80}")
    for part in scope.split("/"):
        if not _PATTERN_PART.fullmatch(part) or part in (".", ".."):
            raise ValueError(f"scope must be 'user/agent' (each part a name or a '*' glob); got {scope!r:.80}")
    return scope


def matches(pattern: str, scope: Scope) -> bool:
    user, agent = pattern.split("/")
    return fnmatchcase(scope.user_id, user) and fnmatchcase(scope.agent_name, agent)


def covers(outer: str, inner: str) -> bool:
    """Whether every scope that `inner` matches is matched by `outer` (for what an admin of `outer` manages)."""
    for o, i in zip(outer.split("/"), inner.split("/")):
        if not (o == "*" or o == i or ("*" not in i and fnmatchcase(i, o))):
            return False
    return True


class SandboxLimitError(MemoryCoreError):
    """No new sandbox now: as many are open, or were opened in the last minute, as the settings allow."""


def _well_formed(secret: object) -> bool:
    return isinstance(secret, str) and secret.startswith(TOKEN_PREFIX) and len(secret) <= 128


def hash_secret(secret: str) -> str:
    # Token secrets are 256 random bits: a plain hash is as strong as a slow one here, and verifies fast.
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Grant:
    id: str
    subject: str
    role: str
    scope: str
    created_at: datetime
    created_by: str | None = None


@dataclass(frozen=True)
class ApiToken:
    id: str
    name: str
    user_id: str
    agent_name: str
    role: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked: bool
    created_by: str | None = None

    @property
    def scope(self) -> Scope:
        return Scope(self.user_id, self.agent_name)

    def active(self, now: datetime) -> bool:
        return not self.revoked and (self.expires_at is None or self.expires_at > now)


@dataclass(frozen=True)
class AccessEvent:
    at: datetime
    actor: str | None
    action: str
    detail: dict


@dataclass(frozen=True)
class Principal:
    """Who is asking: a signed-in person, the single local operator, an anonymous visitor in a sandbox, an
    agent's token, or nobody (anonymous where anonymous access is off)."""

    kind: str  # person, operator, sandbox, token, nobody
    email: str | None = None
    sandbox: Scope | None = None
    token: ApiToken | None = None

    @classmethod
    def person(cls, email: str) -> "Principal":
        return cls("person", email=normalise_email(email))

    @property
    def actor(self) -> str:
        """How this principal's changes are recorded."""
        if self.kind == "person":
            return f"dashboard:{self.email}"
        if self.kind == "sandbox" and self.sandbox:
            return f"dashboard:sandbox:{self.sandbox.user_id}"
        if self.kind == "token" and self.token:
            return f"mcp:{self.token.name}"
        return f"dashboard:{self.kind}"


OPERATOR = Principal("operator")
NOBODY = Principal("nobody")


def _grant(row: GrantRow) -> Grant:
    return Grant(row.id, row.subject, row.role, row.scope, utc(row.created_at), row.created_by)


def _token(row: ApiTokenRow) -> ApiToken:
    return ApiToken(row.id, row.name, row.user_id, row.agent_name, row.role, utc(row.created_at),
                    utc(row.expires_at) if row.expires_at else None,
                    utc(row.last_used_at) if row.last_used_at else None, bool(row.revoked), row.created_by)


class ViewMaker(Protocol):
    """Whatever makes views of a scope for a principal (Memory)."""

    def view(self, principal: "Principal", *, user_id: str, agent_name: str) -> Any: ...


class Access:
    """`memory.access`: grants, roles, API tokens, sandboxes; and the one policy that turns a principal into
    a role on a scope."""

    def __init__(self, db: "Database", clock: "Clock", settings: "Settings") -> None:
        self._store = AccessStore(db, clock)
        self._clock = clock
        self._settings = settings
        self._tokens: dict[str, tuple[ApiToken, float]] = {}  # secret hash -> (token, when read, monotonic)
        self._tokens_lock = threading.Lock()

    # -- grants -------------------------------------------------------------------------------------

    def grant(self, subject: str, role: str, scope: str = "*/*") -> Grant:
        """Give `role` to an e-mail address or a domain ("@acme.com") on a scope pattern (audited). Granting
        the same subject and pattern again changes the role."""
        subject, role, scope = validate_subject(subject), validate_role(role), validate_pattern(scope)
        return _grant(self._store.put_grant("grant_" + secrets.token_hex(4), subject, role, scope, current_actor()))

    def revoke(self, grant_id: str) -> None:
        if not isinstance(grant_id, str):
            raise KeyError(grant_id)
        self._store.delete_grant(grant_id, current_actor())

    def grants(self) -> list[Grant]:
        return [_grant(r) for r in self._store.grants()]

    def role_for(self, email: str, *, user_id: str = "default", agent_name: str = "default") -> str | None:
        """The strongest role any grant (or Settings.admins) gives `email` on the scope; None if none."""
        scope = make_scope(user_id, agent_name)
        try:
            email = normalise_email(email)
        except ValueError:
            return None
        return strongest(role for pattern, role in self._patterns(email) if matches(pattern, scope))

    def can(self, email: str, action: str, *, user_id: str = "default", agent_name: str = "default") -> bool:
        return enough(self.role_for(email, user_id=user_id, agent_name=agent_name), action)

    def _patterns(self, email: str) -> list[tuple[str, str]]:
        """(pattern, role) of every grant that names this e-mail or its domain, bootstrap admins included."""
        subjects = [email, "@" + email.rsplit("@", 1)[1]]
        found = [(r.scope, r.role) for r in self._store.grants_for(subjects)]
        if email in self._settings.admins:
            found.append(("*/*", "admin"))
        return found

    # -- the policy: a principal's role on a scope --------------------------------------------------

    def role(self, principal: Principal, scope: Scope) -> str | None:
        """The one decision: what `principal` may do in `scope`."""
        if principal.kind == "operator":
            return "admin"
        if principal.kind == "person" and principal.email:
            return self.role_for(principal.email, user_id=scope.user_id, agent_name=scope.agent_name)
        if principal.kind == "sandbox":
            return "admin" if principal.sandbox == scope else None
        if principal.kind == "token" and principal.token and principal.token.active(self._clock.now()):
            return principal.token.role if principal.token.scope == scope else None
        return None

    def allows(self, principal: Principal, action: str, scope: Scope) -> bool:
        """Whether `principal` may `action` (read, write, admin) in `scope`."""
        return enough(self.role(principal, scope), action)

    def view(self, memory: "ViewMaker", principal: Principal, *, user_id: str, agent_name: str) -> Any:
        """Kept for callers of the old spelling: `memory.view(principal, ...)` makes the view."""
        return memory.view(principal, user_id=user_id, agent_name=agent_name)

    def readable(self, principal: Principal, scopes: Iterable[Scope]) -> list[Scope]:
        """Those of `scopes` the principal may read (what a scope picker offers)."""
        return [s for s in scopes if self.role(principal, s) is not None]

    def admin_patterns(self, principal: Principal) -> list[str]:
        """The scope patterns the principal administers (manages grants and tokens within)."""
        if principal.kind == "operator":
            return ["*/*"]
        if principal.kind == "person" and principal.email:
            return sorted({p for p, role in self._patterns(principal.email) if role == "admin"})
        return []

    def is_global_admin(self, principal: Principal) -> bool:
        """Admin of every scope: may switch the worker's jobs, which act on everyone."""
        return any(p == "*/*" for p in self.admin_patterns(principal))

    def may_manage(self, principal: Principal, pattern: str) -> bool:
        return any(covers(own, pattern) for own in self.admin_patterns(principal))

    def _require_manage(self, principal: Principal, pattern: str) -> None:
        if not self.may_manage(principal, validate_pattern(pattern)):
            raise PermissionError(f"managing access to {pattern} needs the admin role there")

    def grant_as(self, principal: Principal, subject: str, role: str, scope: str = "*/*") -> Grant:
        """`grant()` on behalf of a principal, who must administer the whole pattern."""
        self._require_manage(principal, scope)
        return self.grant(subject, role, scope)

    def revoke_as(self, principal: Principal, grant_id: str) -> None:
        found = next((g for g in self.grants() if g.id == grant_id), None)
        if found is None:
            raise KeyError(grant_id)
        self._require_manage(principal, found.scope)
        self.revoke(grant_id)

    def create_token_as(self, principal: Principal, name: str, *, user_id: str, agent_name: str,
                        role: str = "editor", expires_at: datetime | None = None) -> tuple[ApiToken, str]:
        self._require_manage(principal, f"{validate_name(user_id, 'user_id')}/{validate_name(agent_name, 'agent_name')}")
        return self.create_token(name, user_id=user_id, agent_name=agent_name, role=role, expires_at=expires_at)

    def revoke_token_as(self, principal: Principal, token_id: str) -> None:
        found = next((t for t in self.tokens() if t.id == token_id), None)
        if found is None:
            raise KeyError(token_id)
        self._require_manage(principal, found.scope.key)
        self.revoke_token(token_id)

    # -- API tokens ---------------------------------------------------------------------------------

    def create_token(self, name: str, *, user_id: str = "default", agent_name: str = "default",
                     role: str = "editor", expires_at: datetime | None = None) -> tuple[ApiToken, str]:
        """A token for one scope and role. Returns its record and its secret, shown this once: only a hash
        is stored."""
        name = check_text(name, "name", 64).strip()
        if not name or not re.fullmatch(r"[\w.\- @:]+", name):
            raise ValueError("name must be 1-64 characters of letters, digits, spaces and _ . - @ :")
        scope, role = make_scope(user_id, agent_name), validate_role(role)
        if expires_at is not None:
            if not isinstance(expires_at, datetime):
                raise ValueError("expires_at must be a datetime or None")
            expires_at = utc(expires_at)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = ApiTokenRow(id="tok_" + secrets.token_hex(4), name=name, secret_hash=hash_secret(secret),
                          user_id=scope.user_id, agent_name=scope.agent_name, role=role,
                          created_at=self._clock.now(), expires_at=expires_at, created_by=current_actor())
        return _token(self._store.add_token(row, current_actor())), secret

    def verify_token(self, secret: str) -> ApiToken | None:
        """The token whose secret this is, if it is known, not revoked and not expired; else None."""
        if not _well_formed(secret):
            return None
        digest = hash_secret(secret)
        cached = self._cached(digest)
        if cached is not None:
            token, read_at = cached
        else:
            row = self._store.token_by_hash(digest)
            if row is None:
                return None
            token, read_at = _token(row), time.monotonic()
        now = self._clock.now()
        if not token.active(now):
            with self._tokens_lock:
                self._tokens.pop(digest, None)
            return None
        if token.last_used_at is None or now - token.last_used_at >= _TOUCH_EVERY:
            self._store.touch_token(token.id, now)
            token = replace(token, last_used_at=now)
        with self._tokens_lock:
            if digest not in self._tokens and len(self._tokens) >= TOKEN_CACHE_SIZE:
                self._tokens.pop(next(iter(self._tokens)))
            self._tokens[digest] = (token, read_at)
        return token

    def cached_token(self, secret: str) -> ApiToken | None:
        """`verify_token` where it needs no I/O: the token verified within token_cache_seconds, still active and
        used within the minute; None when `verify_token` must decide (unknown, stale, revoked or expired, or its
        last use to be written). An HTTP request's check runs this on the event loop, the rest in a thread."""
        if not _well_formed(secret):
            return None
        cached = self._cached(hash_secret(secret))
        if cached is None:
            return None
        token, now = cached[0], self._clock.now()
        if not token.active(now) or token.last_used_at is None or now - token.last_used_at >= _TOUCH_EVERY:
            return None
        return token

    def _cached(self, digest: str) -> tuple[ApiToken, float] | None:
        """(token, when read) from the cache while younger than token_cache_seconds."""
        with self._tokens_lock:
            cached = self._tokens.get(digest)
        if cached is not None and time.monotonic() - cached[1] < float(self._settings.token_cache_seconds):
            return cached
        return None

    def revoke_token(self, token_id: str) -> None:
        if not isinstance(token_id, str):
            raise KeyError(token_id)
        self._store.revoke_token(token_id, current_actor())
        with self._tokens_lock:  # at once in this process
            for digest in [d for d, (token, _) in self._tokens.items() if token.id == token_id]:
                del self._tokens[digest]

    def tokens(self) -> list[ApiToken]:
        return [_token(r) for r in self._store.tokens()]

    # -- anonymous visitors -------------------------------------------------------------------------

    def anonymous_mode(self, *, public_host: bool, sign_in_configured: bool) -> str:
        """What an anonymous visitor of the dashboard gets: `full` (the one local operator), `sandbox` or
        `none`. With sign-in configured, anonymous visitors see nothing (they are asked to sign in)."""
        if sign_in_configured:
            return "none"
        if self._settings.anonymous_access:
            return self._settings.anonymous_access
        return "sandbox" if public_host else "full"

    def new_sandbox(self) -> tuple[Principal, str]:
        """A fresh scope of its own for one anonymous visitor, expiring after sandbox_ttl_hours; and its key
        (256 random bits; only its hash is stored), which finds the sandbox again after a reload.
        SandboxLimitError when sandbox_max_live are open or sandbox_max_per_minute were opened in the last
        minute."""
        settings = self._settings
        scope = Scope("sandbox-" + secrets.token_hex(6), "demo")
        key = secrets.token_urlsafe(32)
        refused = self._store.add_sandbox(scope, hash_secret(key),
                                          self._clock.now() + timedelta(hours=settings.sandbox_ttl_hours),
                                          max_live=settings.sandbox_max_live,
                                          max_per_minute=settings.sandbox_max_per_minute)
        if refused == "live":
            raise SandboxLimitError(f"The demo is full: {settings.sandbox_max_live} sandboxes are open, the most "
                                    f"this server keeps (sandbox_max_live). Each expires after "
                                    f"{settings.sandbox_ttl_hours:g} hours; please try again later.")
        if refused == "per_minute":
            raise SandboxLimitError(f"{settings.sandbox_max_per_minute} sandboxes were opened in the last minute, "
                                    "the most this server opens (sandbox_max_per_minute). Please try again in a "
                                    "minute.")
        return Principal("sandbox", sandbox=scope), key

    def sandbox_for(self, key: object) -> Principal | None:
        """The visitor's sandbox for a key from `new_sandbox`, while it has not expired; else None."""
        if not isinstance(key, str) or not 20 <= len(key) <= 128:
            return None
        scope = self._store.sandbox_by_key(hash_secret(key), self._clock.now())
        return Principal("sandbox", sandbox=scope) if scope else None

    def is_sandbox(self, scope: Scope) -> bool:
        return self._store.is_sandbox(scope)

    def expired_sandboxes(self) -> list[Scope]:
        return self._store.expired_sandboxes(self._clock.now())

    def sandbox_removed(self, scope: Scope) -> None:
        self._store.remove_sandbox(scope)

    # -- the log ------------------------------------------------------------------------------------

    def record(self, action: str, **detail: object) -> None:
        """Audit an access-related change made elsewhere (e.g. a worker switch)."""
        self._store.log(current_actor(), action, {k: str(v) for k, v in detail.items()})

    def log(self, limit: int = 200) -> list[AccessEvent]:
        return [AccessEvent(utc(r.at), r.actor, r.action, json.loads(r.detail)) for r in self._store.entries(limit)]

