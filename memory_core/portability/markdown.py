"""A Markdown memory workspace, as OpenClaw and CowAgent keep one: `MEMORY.md` and `memory/YYYY-MM-DD.md`.

A folder or a zip of one (the workspace may sit one folder down in the zip), or a single `MEMORY.md` or
`YYYY-MM-DD.md`. Read as documents, as they are:

- `MEMORY.md` (or OpenClaw's lower-case fallback `memory.md`) -> `MEMORY.md`
- `memory/YYYY-MM-DD.md` -> the same daily log
- `memory/YYYY-MM-DD-topic.md` (OpenClaw's session notes) -> added to that day's log under a heading, since
  memory_core's daily tier reads one file a day
- `memory/dreams/YYYY-MM-DD.md` (CowAgent's dream diary) -> the same; OpenClaw's diary `DREAMS.md` ->
  `memory/dreams/DREAMS.md`

Everything else (USER.md, SOUL.md, machine state under `memory/.dreams/`, phase reports, images) is left
out and named in the notes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date

from memory_core.portability.records import ImportedDocument, ParsedImport, bad_text
from memory_core.portability.safety import MiB, Source, decode_text

FORMAT = "markdown"
# One Markdown file larger than this is not a memory note; OpenClaw's own dreaming stops at 16 MiB too.
MAX_DOCUMENT_BYTES = 16 * MiB
_DAY = r"(?P<day>\d{4}-\d{2}-\d{2})"
_DAILY = re.compile(rf"memory/{_DAY}\.md")
_SESSION = re.compile(rf"memory/{_DAY}-(?P<topic>[A-Za-z0-9][A-Za-z0-9_.\- ]{{0,100}})\.md")
_DREAM = re.compile(rf"memory/dreams/{_DAY}\.md")
_DIARY = ("DREAMS.md", "dreams.md")
DIARY_PATH = "memory/dreams/DREAMS.md"
_SHOWN = 8  # other files named in the notes


def _real_day(text: str) -> bool:
    try:
        date.fromisoformat(text)
        return True
    except ValueError:
        return False


def _is_memory_name(rel: str) -> bool:
    return rel in ("MEMORY.md", "memory.md") or any(
        (m := p.fullmatch(rel)) is not None and _real_day(m.group("day")) for p in (_DAILY, _SESSION))


def workspace_root(names: list[str]) -> str | None:
    """The folder prefix ("" or "name/") under which the workspace's MEMORY.md or memory/ logs sit, if any."""
    roots = set()
    for name in names:
        for n in range(name.count("/") + 1):
            prefix = "/".join(name.split("/")[:n])
            prefix = f"{prefix}/" if prefix else ""
            if _is_memory_name(name[len(prefix):]):
                roots.add(prefix)
    return min(roots, key=lambda r: (r.count("/"), r)) if roots else None


def _single(source: Source) -> dict[str, str]:
    name = source.names[0]
    if name in ("MEMORY.md", "memory.md"):
        return {name: "MEMORY.md"}
    if re.fullmatch(rf"{_DAY}\.md", name) and _real_day(name[:10]):
        return {name: f"memory/{name}"}
    raise ValueError(f"not a Markdown memory file: a single file must be MEMORY.md or YYYY-MM-DD.md, not {name!r:.80}")


def parse(source: Source) -> ParsedImport:
    """Read a workspace folder or zip (or one MEMORY.md / YYYY-MM-DD.md). ValueError when it holds no memory."""
    out = ParsedImport(FORMAT)
    if source.kind == "file":
        for name, path in _single(source).items():
            text = _read(source, name, out)
            if text:
                out.documents.append(ImportedDocument(path, text))
        return out.finish()
    root = workspace_root(source.names)
    if root is None:
        raise ValueError("not a Markdown memory workspace: there is no MEMORY.md or memory/YYYY-MM-DD.md in it")
    plain: dict[str, str] = {}  # source name -> document path
    sessions: dict[str, list[tuple[str, str]]] = defaultdict(list)  # day -> [(source name, topic)]
    others: list[str] = []
    names = set(source.names)
    for name in source.names:
        rel = name[len(root):] if name.startswith(root) else None
        if rel is None:
            others.append(name)
        elif rel == "MEMORY.md" or (rel == "memory.md" and f"{root}MEMORY.md" not in names):
            plain[name] = "MEMORY.md"
        elif (m := _DAILY.fullmatch(rel)) and _real_day(m.group("day")):
            plain[name] = rel
        elif (m := _SESSION.fullmatch(rel)) and _real_day(m.group("day")):
            sessions[m.group("day")].append((name, m.group("topic")))
        elif (m := _DREAM.fullmatch(rel)) and _real_day(m.group("day")):
            plain[name] = rel
        elif rel in _DIARY and DIARY_PATH not in plain.values():
            plain[name] = DIARY_PATH
        else:
            others.append(rel)
    texts: dict[str, str] = {}
    for name, path in plain.items():
        text = _read(source, name, out)
        if text:
            texts[path] = text
    merged = 0
    for day, notes in sorted(sessions.items()):
        blocks = [texts[f"memory/{day}.md"]] if f"memory/{day}.md" in texts else []
        for name, topic in sorted(notes, key=lambda item: item[0]):
            text = _read(source, name, out)
            if text:
                blocks.append(f"## {topic} (from {name[len(root):]})\n\n{text}")
                merged += 1
        if blocks:
            texts[f"memory/{day}.md"] = "\n\n".join(blocks)
    out.documents.extend(ImportedDocument(path, texts[path]) for path in sorted(texts, key=_order))
    if merged:
        out.notes.append(f"{merged} OpenClaw session note(s) (memory/YYYY-MM-DD-topic.md) were added to their "
                         "day's log")
    if others:
        more = f" and {len(others) - _SHOWN} more" if len(others) > _SHOWN else ""
        shown = ", ".join(sorted(others)[:_SHOWN]) + more
        out.notes.append(f"{len(others)} file(s) that are not MEMORY.md or a daily log were not imported: {shown}")
    return out.finish()


def _order(path: str) -> tuple[int, str]:
    return (0 if path == "MEMORY.md" else 2 if path.startswith("memory/dreams/") else 1, path)


def _read(source: Source, name: str, out: ParsedImport) -> str | None:
    """A document's text, or None with an error recorded (the other documents are still read)."""
    try:
        text = decode_text(source.read(name, MAX_DOCUMENT_BYTES), name)
    except ValueError as exc:
        out.error(f"{name}: {exc}")
        return None
    if (why := bad_text(text)) is not None:
        out.error(f"{name}: {why}")
        return None
    return text if text.strip() else None
