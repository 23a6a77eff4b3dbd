"""Roles, weakest first, and what each action needs: the ranks that access policy and scoped views share."""

from __future__ import annotations

from typing import Iterable

ROLES = ("viewer", "editor", "admin")
ACTIONS = {"read": "viewer", "write": "editor", "admin": "admin"}


def rank(role: str | None) -> int:
    """0 for no role, then 1 (viewer), 2 (editor), 3 (admin)."""
    return ROLES.index(role) + 1 if role in ROLES else 0


def enough(role: str | None, action: str) -> bool:
    """Whether `role` allows `action` (read, write, admin); ValueError for another action."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}; got {action!r:.40}")
    return rank(role) >= rank(ACTIONS[action])


def strongest(roles: Iterable[str | None]) -> str | None:
    """The strongest of `roles`, or None where none is a role."""
    best = max(roles, key=rank, default=None)
    return best if rank(best) else None


def validate_role(role: object) -> str:
    """`role` if it is one of ROLES; ValueError otherwise."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}; got {role!r:.40}")
    return role  # type: ignore[return-value]
