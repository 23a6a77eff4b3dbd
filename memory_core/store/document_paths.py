"""Which paths name a scope's documents: `MEMORY.md`, `memory/NAME.md`, `memory/dreams/NAME.md`.

Both document stores (files and database rows) refuse any other path with KeyError, whoever calls them.
"""

from __future__ import annotations

import re

_NAME = r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,99}"  # no leading dot: no dotfiles (sidecars, temporaries), no ".."
_DOCUMENT = re.compile(rf"MEMORY\.md|memory/(?:dreams/)?{_NAME}\.md")
FOLDERS = ("", "memory", "memory/dreams")  # where documents live, for listing


def is_document_path(path: object) -> bool:
    """Whether `path` names one of a scope's documents: `MEMORY.md`, `memory/NAME.md`, `memory/dreams/NAME.md`."""
    return isinstance(path, str) and _DOCUMENT.fullmatch(path) is not None


def check_path(path: object) -> str:
    """Return `path` if it names a document, else raise KeyError, exactly as for an unknown document."""
    if not is_document_path(path):
        raise KeyError(f"no document {path!r:.120}: a scope's documents are MEMORY.md and memory/...")
    return path  # type: ignore[return-value]


def check_folder(prefix: object) -> str:
    """Return `prefix` without slashes if documents live there ("", "memory", "memory/dreams"), else KeyError."""
    folder = prefix.strip("/") if isinstance(prefix, str) else None
    if folder not in FOLDERS:
        raise KeyError(f"no document folder {prefix!r:.120}: documents are listed in {', '.join(map(repr, FOLDERS))}")
    return folder
