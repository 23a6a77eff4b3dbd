"""Scopes: every stored thing belongs to one (user_id, agent_name)."""

from __future__ import annotations

import re
from typing import NamedTuple

_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


class Scope(NamedTuple):
    user_id: str
    agent_name: str

    @property
    def key(self) -> str:
        return f"{self.user_id}/{self.agent_name}"


def validate_name(value: object, field: str) -> str:
    """Return `value` if it is a valid scope component, else raise ValueError naming the field."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value in (".", ".."):
        raise ValueError(
            f"{field} must be 1-64 characters of letters, digits, '_', '-', '.' (not '.' or '..'); got {value!r:.80}"
        )
    return value


def make_scope(user_id: object = "default", agent_name: object = "default") -> Scope:
    return Scope(validate_name(user_id, "user_id"), validate_name(agent_name, "agent_name"))


DEFAULT_SCOPE = Scope("default", "default")
