"""Checks on text that enters memory: the same refusals on every database, before anything is written."""

from __future__ import annotations

import re

from memory_core.text.words import strip_bidi

# A lone surrogate cannot be encoded as UTF-8: SQLite would store it mangled and PostgreSQL refuses it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(value: object, field: str, max_chars: int | None = None, *, allow_empty: bool = True,
               setting: str | None = None) -> str:
    """Return `value` as it is stored, if it is storable text, else raise ValueError naming `field`.

    Refused everywhere alike: a non-string, NUL characters (PostgreSQL cannot store them), lone
    surrogates (not UTF-8), and more than `max_chars` characters (the message names the `setting` that
    sets that limit, when given). Bidirectional control characters are removed (writers store the
    returned text): they make text read other than it is.
    """
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a string; got {type(value).__name__}")
    if max_chars is not None and len(value) > max_chars:
        raise ValueError(f"{field} is {len(value):,} characters; the limit is {max_chars:,}"
                         + (f" ({setting})" if setting else ""))
    if "\x00" in value:
        raise ValueError(f"{field} contains a NUL character, which cannot be stored")
    if _SURROGATE.search(value):
        raise ValueError(f"{field} contains a lone surrogate (not valid Unicode text)")
    if not allow_empty and not value.strip():
        raise ValueError(f"{field} must not be empty")
    return strip_bidi(value)


def check_memory_text(value: object, field: str, max_chars: int | None = None, *, allow_empty: bool = True,
                      setting: str | None = None) -> str:
    """`check_text` for text that becomes memory: credentials in it are masked as `[secret]` (credentials.py),
    so that no secret is ever stored, injected or shown, and chat-template tokens, tag and zero-width characters
    are removed (instructions.py), so that memory stays data."""
    from memory_core.text.credentials import without_secrets
    from memory_core.text.instructions import without_template_tokens

    text = check_text(value, field, max_chars, allow_empty=allow_empty, setting=setting)
    return without_secrets(without_template_tokens(text))
