"""Which tool a file came from, told by its content (a zip or folder by the files it holds), and reading it.

`read_import(path, format=None)` is the one entry point: open the file, folder or zip safely, recognise the
format unless given, and hand it to that format's parser. A file that is not what it should be raises a
ValueError saying what was expected; nothing is written anywhere.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

from memory_core.portability import chatgpt, claude, deerflow, markdown, mem0
from memory_core.portability.records import FORMATS, ParsedImport
from memory_core.portability.safety import GZIP_MAGIC, JsonArray, Source

log = logging.getLogger(__name__)

PARSERS: dict[str, Callable[[Source], ParsedImport]] = {
    "deerflow": deerflow.parse, "mem0": mem0.parse, "chatgpt": chatgpt.parse, "claude": claude.parse,
    "markdown": markdown.parse,
}
EXPECTED = ("conversations.json (ChatGPT, Claude), memories.json or memories.jsonl.gz (mem0 / OpenMemory), "
            "memory.json (DeerFlow), or MEMORY.md and memory/YYYY-MM-DD.md (OpenClaw, CowAgent)")


def detect(source: Source) -> str:
    """The format of an opened source, by content; ValueError when it is none memory_core reads."""
    if source.kind == "file":
        return _detect_file(source)
    conversations = source.find("conversations.json")
    if conversations is not None:
        value = source.json_lazily(conversations)
        if chatgpt.looks_like(value):
            return "chatgpt"
        if claude.looks_like(value):
            return "claude"
        raise ValueError(f"{conversations} is neither a ChatGPT nor a Claude export (no 'mapping' or "
                         "'chat_messages' in its conversations)")
    if source.find("memories.jsonl.gz") is not None:
        return "mem0"
    memories = source.find("memories.json")
    if memories is not None:
        value = source.json(memories)
        if claude.looks_like_memories(value):
            return "claude"
        if mem0.looks_like(value):
            return "mem0"
    if markdown.workspace_root(source.names) is not None:
        return "markdown"
    memory = source.find("memory.json")
    if memory is not None and deerflow.looks_like(source.json(memory)):
        return "deerflow"
    raise ValueError(f"nothing memory_core can import was found in this {source.kind}: expected {EXPECTED}")


def _detect_file(source: Source) -> str:
    name = source.names[0]
    if name.lower().endswith(".md"):
        return "markdown"
    if source.head(name, 2) == GZIP_MAGIC or name.lower().endswith(".jsonl"):
        return "mem0"  # only OpenMemory's export writes memories as (gzipped) JSON Lines
    value = source.json_lazily(name)
    if isinstance(value, JsonArray):  # a list (a large export, say): its first elements tell what it is
        value = value.head(50)
    for fmt, looks_like in (("chatgpt", chatgpt.looks_like), ("claude", claude.looks_like),
                            ("claude", claude.looks_like_memories), ("deerflow", deerflow.looks_like),
                            ("mem0", mem0.looks_like)):
        if looks_like(value):
            return fmt
    if value == [] or value == {}:
        raise ValueError(f"{name!r:.120} is empty JSON: nothing to import, and no way to tell its format")
    raise ValueError(f"{name!r:.120} is JSON, but not a format memory_core can import: expected {EXPECTED}")


def detect_format(path: str | Path) -> str:
    """"deerflow", "mem0", "chatgpt", "claude" or "markdown" for the file, folder or zip at `path`, by content."""
    with Source.open(path) as source:
        return detect(source)


def read_import(path: str | Path, format: str | None = None) -> ParsedImport:
    """Read another tool's export into neutral records (see `records`); ValueError on a bad file or format."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} (or None to recognise it); got {format!r:.40}")
    with Source.open(path) as source:
        chosen = format or detect(source)
        parsed = PARSERS[chosen](source)
        parsed.notes.extend(source.notes)
    log.info("read %s import: %d facts, %d summaries, %d conversations, %d documents, %d errors", chosen,
             len(parsed.facts), len(parsed.summaries), len(parsed.conversations), len(parsed.documents),
             len(parsed.errors))
    return parsed
