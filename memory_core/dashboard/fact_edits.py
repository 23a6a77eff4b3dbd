"""The Facts grid's edits, keyed to the fact and the version they were made on, never to a row position.

`st.data_editor` records edits by row position. The grid's rows are therefore frozen (a snapshot of each
fact's id, version and values) from the first edit until the edits are saved or discarded: a fact added or
changed meanwhile (another tab, an agent) cannot shift an edit onto another fact. A save sends each edit to
`revise` with the version it was made on, which refuses an edit whose fact changed since; then the editor
starts afresh (a new widget key), so nothing is offered twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

EDITABLE = ("content", "category", "confidence")


@dataclass(frozen=True)
class Row:
    """One grid row as the person saw it: the fact's id, its version (`updated_at`) and its editable values."""

    id: str
    version: datetime
    content: str
    category: str
    confidence: float

    @classmethod
    def of(cls, fact: Any) -> "Row":
        return cls(fact.id, fact.updated_at, fact.content, fact.category, float(fact.confidence))


@dataclass(frozen=True)
class Edit:
    """What the person changed in one fact's row (only the fields that differ), and on which version."""

    row: Row
    changes: dict[str, Any]
    delete: bool = False


@dataclass
class SaveOutcome:
    """What a save did, in words for the page (one line a fact)."""

    done: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def pending_edits(rows: list[Row], edited_rows: dict | None) -> list[Edit]:
    """The edits of `st.data_editor`'s `edited_rows` ({position: {column: value}}) on the frozen `rows`, each
    keyed to its fact; a value set back to what it was is no edit."""
    edits = []
    for position, values in sorted((int(k), v) for k, v in (edited_rows or {}).items()):
        if not 0 <= position < len(rows) or not isinstance(values, dict):
            continue
        row = rows[position]
        changes = {}
        for name in EDITABLE:
            if name in values and values[name] is not None and values[name] != getattr(row, name):
                value = values[name]
                if name == "confidence":
                    value = float(value)
                    if abs(value - row.confidence) < 1e-9:
                        continue
                changes[name] = value
        delete = bool(values.get("delete"))
        if changes or delete:
            edits.append(Edit(row, changes, delete))
    return edits


def quote(text: str, limit: int = 120) -> str:
    """A fact's text to quote in a message, shortened."""
    text = " ".join(str(text).split())
    return f"“{text if len(text) <= limit else text[:limit - 1] + '…'}”"


def save_edits(view: Any, edits: Iterable[Edit]) -> SaveOutcome:
    """Apply each content/category/confidence edit through `revise`, on the version it was made on."""
    from memory_core.errors import StaleEditError

    outcome = SaveOutcome()
    for edit in edits:
        if not edit.changes:
            continue
        try:
            revision = view.facts.revise(
                edit.row.id, content=edit.changes.get("content"), category=edit.changes.get("category"),
                confidence=edit.changes.get("confidence"), reason="edited on the dashboard",
                made_on=edit.row.version)
        except StaleEditError:
            outcome.refused.append(f"Not saved: {quote(edit.row.content)} was changed elsewhere after you began "
                                   "editing it. Look at it again and redo the edit.")
        except KeyError:
            outcome.refused.append(f"Not saved: {quote(edit.row.content)} no longer exists.")
        except (ValueError, PermissionError) as exc:
            outcome.refused.append(f"Not saved: {quote(edit.row.content)}: {exc}")
        else:
            if revision.superseded:
                outcome.done.append(f"{quote(edit.row.content)} is now {quote(revision.fact.content)} (the old "
                                    "statement stays in its history).")
            elif revision.changed:
                outcome.done.append(f"{quote(edit.row.content)}: {' and '.join(revision.changed)} changed.")
            else:
                outcome.done.append(f"{quote(edit.row.content)}: nothing to change.")
    return outcome


def delete_facts(view: Any, rows: Iterable[Row]) -> SaveOutcome:
    """Delete the facts of `rows` for good, each only if it is still the version the person ticked."""
    outcome = SaveOutcome()
    for row in rows:
        try:
            now = view.facts.get(row.id)
        except KeyError:
            outcome.refused.append(f"{quote(row.content)} was already gone.")
            continue
        if now.updated_at != row.version:
            outcome.refused.append(f"Not deleted: {quote(row.content)} was changed elsewhere after you ticked it.")
            continue
        try:
            view.facts.delete(row.id)
        except (KeyError, PermissionError) as exc:
            outcome.refused.append(f"Not deleted: {quote(row.content)}: {exc}")
        else:
            outcome.done.append(f"Deleted {quote(row.content)}.")
    return outcome
