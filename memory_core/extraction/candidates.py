"""What an extractor hands on: candidate facts, the reply they come in, and the Extractor protocol.

The LLM extractor (extraction.py) and the offline one (heuristics.py) both return these, so they live below both."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol


@dataclass(frozen=True)
class Candidate:
    """An extracted fact. `supersedes` names what it replaces: ids of stored facts of the scope, or "#n" for
    the n-th candidate (0-based) of the same reply, a correction within one conversation."""

    content: str
    category: str
    confidence: float
    supersedes: tuple[str, ...] = ()


@dataclass
class ExtractionReply:
    """What an extractor found in one conversation: facts to add, items it could not use, summaries and removals."""

    facts: list[Candidate] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (content or repr, why)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (content, how a loosely written item was read)
    summaries: dict[str, str] = field(default_factory=dict)
    remove_ids: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


class Extractor(Protocol):
    """Turns a conversation and the scope's current memory into an ExtractionReply."""

    offline: bool

    def extract(self, messages: list[dict[str, str]], current_memory: Mapping[str, Any], *,
                said_on: str | None = None) -> ExtractionReply:
        """`said_on`: the day the conversation took place ("8 May 2023"), which its relative dates mean from."""
        ...
