"""Memory formatted for prompt injection, within an exact token budget.

The text is, in order and leaving out empty parts:

    User Context:
    - Work: ...
    - Personal: ...
    - Top of mind: ...

    History:
    - Recent: ...
    - Earlier: ...
    - Background: ...

    Facts:
    - [{category} | {confidence:.2f}] {content}
    - [correction | {confidence:.2f}] {content} (avoid: {sourceError})

Memory is data: markup in any of it is written so that it cannot act (`<`/`>` of tags as `&lt;`/`&gt;`, a
Markdown image as `(image: alt, url)`), and a summary's sentences that instruct the agent are left out (facts
that do are held when stored: memory_core.text.instructions).

Over budget, facts go from the lowest confidence up: the kept facts are the most confident that fit, and a
fact too long for what is left is passed over while the smaller ones after it still fill the budget. If the
summaries alone are over, their sentences go whole from the end; a sentence said already (in an earlier
summary, or as a fact, which the budget weighs as a fact) is left out. If the text is still over (a single
sentence too long), it is cut at character level and "\\n..." appended, the marker included in the budget.

With a `priority` (fact ids, most relevant to a query first), those facts are taken first, each one that
fits, then the others by confidence as far as the budget reaches, in the same way; the kept facts are still
listed by confidence, so relevance decides what goes in, never how it reads.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from itertools import accumulate
from functools import lru_cache
from operator import itemgetter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from memory_core.search.cache import BytesLRU
from memory_core.text.instructions import as_data, without_instructions
from memory_core.text.tokens import count_tokens, encoding_name_for, get_encoding, token_byte_lengths, truncate_to_tokens

TRUNCATION_MARKER = "\n..."
MIN_LINE_TOKENS = 6  # no fact line costs fewer ("- [x | 0.90] y" is more): below this left, nothing more fits
MAX_PASSED_OVER = 2000  # facts too long for what is left, looked past before the filling stops
USER_FIELDS = (("workContext", "Work"), ("personalContext", "Personal"), ("topOfMind", "Top of mind"))
HISTORY_FIELDS = (("recentMonths", "Recent"), ("earlierContext", "Earlier"), ("longTermBackground", "Background"))
_WS = re.compile(r"\s+")
LINE_COSTS = 8192  # fact lines whose token counts are kept (by a digest of the line: no text is held)
_line_costs = BytesLRU(LINE_COSTS)  # each entry counted as 1: the last LINE_COSTS lines


@dataclass
class InjectedPassage:
    """A passage that a query brought into the text (memory_core.context.evidence), as it stands there."""

    when: str  # YYYY-MM-DD; "" when undated (MEMORY.md)
    where: str  # conversation, daily log, MEMORY.md
    header: str  # "[8 May 2023]", "[8 May 2023, daily log]", "[MEMORY.md]"
    lines: list[str]  # as written under the header, without their "- "
    tokens: int  # what it adds to the text: its lines, and its header when it is the first under it
    sources: list[str] = field(default_factory=list)


@dataclass
class InjectionReport:
    """What `format_memory_for_injection` did: for the Context Preview page."""

    text: str
    tokens: int
    max_tokens: int
    encoding: str
    section_tokens: dict[str, int] = field(default_factory=dict)
    kept_fact_ids: list[str] = field(default_factory=list)
    dropped_fact_ids: list[str] = field(default_factory=list)
    truncated: bool = False
    passage_sources: list[str] = field(default_factory=list)  # with a query: the passages added (context.evidence)
    dropped_count: int = 0  # every fact left out; `dropped_fact_ids` may list only those read (see ScopedMemory)
    # With a query (see ScopedMemory.injection_report): the facts search ranked most relevant, best first (kept
    # first, each that fits); the budget the summaries and facts had (the rest went to passages); the passages
    # in the order of the text. Their tokens and the "Relevant passages:" title add up to that section's.
    relevant_fact_ids: list[str] = field(default_factory=list)
    facts_max_tokens: int | None = None
    passages: list[InjectedPassage] = field(default_factory=list)


def one_line(text: object) -> str:
    """Fold all white space (newlines included) to single spaces, so content can never forge a section, and write
    markup as data (`as_data`), so that it can never close or open the agent's wrapper nor make a client fetch."""
    text = text if isinstance(text, str) else str(text)
    return _one_line_kept(text) if len(text) <= LINE_CHARS else _one_line(text)


def _one_line(text: str) -> str:
    if text.isprintable() and "  " not in text:  # the common case: nothing to fold
        return as_data(text.strip())
    return as_data(_WS.sub(" ", text).strip())


LINE_CHARS = 1000  # the last LINE_COSTS texts of up to this many characters are folded once (the same each call)
_one_line_kept = lru_cache(maxsize=LINE_COSTS)(_one_line)


def _summary(part: Any) -> str:
    """A summary as injected: one line, its sentences that instruct the agent left out."""
    if isinstance(part, Mapping):
        part = part.get("summary", "")
    return one_line(without_instructions(part)) if isinstance(part, str) else ""


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _said(text: str) -> str:
    """A sentence as compared for repeats: case, spacing and the final full stop do not count."""
    return " ".join(text.casefold().split()).rstrip(".!? ")


def _unrepeated(text: str, said: set[str]) -> str:
    """`text` without the sentences already said (in an earlier summary, or as a fact of its own, which the
    budget weighs as a fact); `said` gains the ones kept."""
    kept = []
    for sentence in _SENTENCE_END.split(text):
        key = _said(sentence)
        if key and key not in said:
            said.add(key)
            kept.append(sentence)
    return " ".join(kept)


def _sentences(group: Any, fields: tuple[tuple[str, str], ...], said: set[str]) -> list[tuple[str, list[str]]]:
    """[(label, its sentences not said before)] of a summary group, in order."""
    if not isinstance(group, Mapping):
        return []
    out = []
    for key, label in fields:
        if text := _unrepeated(_summary(group.get(key)), said):
            out.append((label, _SENTENCE_END.split(text)))
    return out


def _render(title: str, parts: list[tuple[str, list[str]]]) -> str:
    lines = [f"- {label}: {' '.join(sentences)}" for label, sentences in parts if sentences]
    return f"{title}:\n" + "\n".join(lines) if lines else ""


def _summaries(memory_data: Mapping[str, Any], said: set[str], max_tokens: int, encode) -> tuple[str, str]:
    """The User Context and History parts within the budget: over it, whole sentences go from the end (the
    last section's last first), as facts go whole; a single sentence still too long is left to be cut."""
    user = _sentences(memory_data.get("user"), USER_FIELDS, said)
    history = _sentences(memory_data.get("history"), HISTORY_FIELDS, said)

    def head() -> str:
        return "\n\n".join(p for p in (_render("User Context", user), _render("History", history)) if p)

    while sum(len(s) for _, s in user + history) > 1 and len(encode(head())) > max_tokens:
        last = next(parts for parts in (history, user) if any(s for _, s in parts))
        label, sentences = next(item for item in reversed(last) if item[1])
        sentences.pop()
    return _render("User Context", user), _render("History", history)


def _fact_confidence(fact: Any) -> float:
    try:
        return float(fact.get("confidence", 0.0))
    except (AttributeError, TypeError, ValueError):
        return 0.0


def fact_line(fact: Mapping[str, Any]) -> str:
    line = f"- [{one_line(fact.get('category', ''))} | {_fact_confidence(fact):.2f}] {one_line(fact.get('content', ''))}"
    mistake = fact.get("sourceError")  # a correction names what to avoid, as DeerFlow injects it
    if fact.get("category") == "correction" and isinstance(mistake, str) and (mistake := one_line(mistake)):
        line += f" (avoid: {mistake})"
    return line


def _confidences(facts: list[Any]) -> np.ndarray:
    try:
        return np.fromiter(map(itemgetter("confidence"), facts), dtype=np.float64, count=len(facts))
    except (KeyError, TypeError, ValueError):
        return np.fromiter((_fact_confidence(f) for f in facts), dtype=np.float64, count=len(facts))


def _stable_desc(indices: np.ndarray, confidences: np.ndarray) -> list[int]:
    """`indices` by confidence, highest first; ties in their given order (oldest first from the store)."""
    return indices[np.lexsort((indices, -confidences[indices]))].tolist()


def _order(facts: list[Any], likely: int) -> Iterator[int]:
    """Indices of `facts` by confidence, highest first, ties in the given order.

    Only the `likely` best are ordered up front (a partial selection is O(n), a sort O(n log n)); the
    rest are ordered only if the budget reaches past them.
    """
    n = len(facts)
    if n == 0:
        return
    confidences = _confidences(facts)
    if n <= likely * 2:
        yield from _stable_desc(np.arange(n), confidences)
        return
    threshold = np.partition(confidences, n - likely)[n - likely]
    head = np.flatnonzero(confidences >= threshold)  # ties at the threshold all come along, in order
    yield from _stable_desc(head, confidences)
    tail = np.flatnonzero(confidences < threshold)
    yield from _stable_desc(tail, confidences)


def _fit(memory_data: Any, max_tokens: int, model: str | None,
         priority: Sequence[str] | None = None) -> tuple[str, int, str, str, list[Any], list[int], bool]:
    """The budgeted text. Returns (text, tokens, user part, history part, facts, kept indices, truncated).

    Facts are taken in confidence order as far as a character estimate of the budget reaches, and the
    candidate text is encoded once. Every fact line starts with "- ", which begins a pre-token in both
    encodings (their patterns have no look-behind), so the exact token count of the text cut after line
    k is the number of tokens ending at or before line k's start plus the tokens of line k on its own.
    A binary search over k then finds the cut without encoding the whole text again.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be a non-negative integer; got {max_tokens!r}")
    memory_data = memory_data if isinstance(memory_data, Mapping) else {}
    enc = get_encoding(model)
    encode = enc.encode_ordinary
    facts = memory_data.get("facts")
    facts = facts if isinstance(facts, list) else []
    summarised = any(_summary(group.get(key)) for name, fields in (("user", USER_FIELDS), ("history", HISTORY_FIELDS))
                     if isinstance(group := memory_data.get(name), Mapping) for key, _label in fields)
    said = {_said(one_line(f.get("content", ""))) for f in facts if isinstance(f, Mapping)} if summarised else set()
    user_part, history_part = _summaries(memory_data, said, max_tokens, encode)
    head = "\n\n".join(p for p in (user_part, history_part) if p)
    prefix = f"{head}\n\nFacts:\n" if head else "Facts:\n"
    if priority:
        return _fit_priority(head, prefix, facts, list(priority), max_tokens, model, user_part, history_part)
    # A fact line is at least 9 tokens ("- [goal | 0.90] x"), so no more than this many can fit.
    order = _order(facts, max_tokens // 9 + 1)
    lines: list[str] = []
    kept: list[int] = []
    exhausted, chars, char_budget = False, 0, max_tokens * 5 + 64

    while True:
        while chars <= char_budget:
            index = next(order, None)
            if index is None:
                exhausted = True
                break
            fact = facts[index]
            if isinstance(fact, dict) and one_line(fact.get("content", "")):
                line = fact_line(fact)
                lines.append(line)
                kept.append(index)
                chars += len(line) + 1
        if not lines:
            text, tokens, k = head, len(encode(head)), 0
            break
        full = prefix + "\n".join(lines)
        ids = encode(full)
        if len(ids) <= max_tokens:
            if not exhausted:
                char_budget *= 2  # everything so far fits and more facts wait: take more
                continue
            text, tokens, k = full, len(ids), len(lines)
            break
        token_ends = np.cumsum(token_byte_lengths(model)[np.asarray(ids)])
        starts = list(accumulate((len(line.encode("utf-8")) + 1 for line in lines[:-1]),
                                 initial=len(prefix.encode("utf-8"))))

        def tokens_through(k: int) -> int:
            if k == 0:
                return len(encode(head))
            return int(np.searchsorted(token_ends, starts[k - 1], side="right")) + len(encode(lines[k - 1]))

        lo, hi = 0, len(lines) - 1  # the largest k with tokens_through(k) <= max_tokens
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if tokens_through(mid) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        k = lo
        tokens = tokens_through(k)
        if tokens <= max_tokens and max_tokens - tokens >= MIN_LINE_TOKENS:  # room left after a fact too long:
            return _fit_priority(head, prefix, facts, [], max_tokens, model, user_part, history_part)  # fill it
        text = prefix + "\n".join(lines[:k]) if k else head
        break

    truncated = tokens > max_tokens
    if truncated:
        text, tokens = _truncate(text, max_tokens, model)
    return text, tokens, user_part, history_part, facts, kept[:k], truncated


def _fit_priority(head: str, prefix: str, facts: list[Any], priority: list[str], max_tokens: int,
                  model: str | None, user_part: str, history_part: str) -> tuple[str, int, str, str, list[Any], list[int], bool]:
    """`_fit` with the facts named in `priority` taken first (each that fits), then the rest by confidence,
    each that fits in what is left (`_fit` comes here too once a fact did not fit: it fills the rest); the kept
    ones are listed by confidence. The filling stops when fewer tokens are left than any line costs, or after
    MAX_PASSED_OVER facts too long for what is left.

    Line starts are pre-token boundaries (see `_fit`), so the text's tokens are the prefix's, plus each
    listed line's with its newline, less the newline of the last line; the text is encoded once at the end
    to make sure, and a fact dropped should that ever disagree.
    """
    encoding = encoding_name_for(model)
    encode = get_encoding(encoding).encode_ordinary
    prepared = [_prepared(fact, encoding, encode) for fact in facts]
    position = {}
    for index, fact in enumerate(facts):
        if prepared[index] is not None:
            position.setdefault(str(fact.get("id", "")), index)
    first = [position[i] for i in dict.fromkeys(map(str, priority)) if i in position]
    confidences = _confidences(facts)
    lines: dict[int, str] = {}
    costs: dict[int, int] = {}  # tokens of the line with its newline
    tails: dict[int, int] = {}  # tokens of the line without it, when it is the last one listed
    used = len(encode(prefix))

    def listed(kept: Iterable[int]) -> list[int]:
        return _stable_desc(np.fromiter(kept, dtype=np.int64), confidences)

    kept: list[int] = []
    taken = set(first)
    rest = ((i, False) for i in _order(facts, max_tokens // 9 + 1 + len(first)) if i not in taken)
    summed, last, passed_over = used, None, 0  # the prefix and the kept lines' costs; the last one listed

    def lists_after(i: int, j: int) -> bool:
        return (-confidences[i], i) > (-confidences[j], j)

    for index, relevant in itertools.chain(((i, True) for i in first), rest):
        if prepared[index] is None:
            continue
        if not relevant and (max_tokens - (summed - (costs[last] - tails[last] if last is not None else 0))
                             < MIN_LINE_TOKENS or passed_over >= MAX_PASSED_OVER):
            break  # no line fits in what is left, or enough were looked at
        lines[index], costs[index], tails[index] = prepared[index]
        then_last = index if last is None or lists_after(index, last) else last
        if summed + costs[index] - costs[then_last] + tails[then_last] <= max_tokens:
            kept.append(index)
            summed += costs[index]
            last = then_last
        elif not relevant:  # too long for what is left: passed over, and the next ones are tried
            passed_over += 1
    order = listed(kept) if kept else []
    while order:
        text = prefix + "\n".join(lines[i] for i in order)
        tokens = len(encode(text))
        if tokens <= max_tokens:
            break
        order = order[:-1]  # not expected: the sum above is exact
    if not order:
        text, tokens = head, len(encode(head))
    truncated = tokens > max_tokens
    if truncated:
        text, tokens = _truncate(text, max_tokens, model)
    return text, tokens, user_part, history_part, facts, order, truncated


def _line_cost(line: str, encoding: str, encode: Callable[[str], list[int]]) -> tuple[int, int]:
    """The tokens of a fact line with its newline and without: the same line costs the same on every call, so each
    is counted once (of the last LINE_COSTS lines)."""
    key = hashlib.blake2b(f"{encoding}\0{line}".encode("utf-8", "surrogatepass"), digest_size=16).digest()
    cost = _line_costs.get(key)
    if cost is None:
        cost = len(encode(line + "\n")), len(encode(line))
        _line_costs.put(key, cost, 1)
    return cost


_PREPARED: dict[tuple, tuple[str, int, int] | None] = {}  # what a fact line is made of -> `_prepared`


def _prepared(fact: Any, encoding: str, encode: Callable[[str], list[int]]) -> tuple[str, int, int] | None:
    """(its line, the line's tokens with its newline, without) of a fact the text can list; None for one it cannot
    (not a dict, or no content). A question's injection weighs the same hundred facts as the last one did: the
    result is kept by what the line is made of (of the last LINE_COSTS facts of up to LINE_CHARS characters)."""
    if not isinstance(fact, dict):
        return None
    get = fact.get
    content = get("content", "")
    key = (encoding, get("category", ""), get("confidence", 0.0), content, get("sourceError"))
    try:
        return _PREPARED[key]
    except KeyError:
        pass
    except TypeError:  # a value that cannot be a key (a list): made each time
        key = None
    if not one_line(content):
        out = None
    else:
        line = fact_line(fact)
        out = (line, *_line_cost(line, encoding, encode))
    if key is not None and isinstance(content, str) and len(content) <= LINE_CHARS:
        if len(_PREPARED) >= LINE_COSTS:
            _PREPARED.clear()  # a new run of facts: they are kept again as they come
        _PREPARED[key] = out
    return out


def build_injection(memory_data: Mapping[str, Any] | None, max_tokens: int = 2000, *, model: str | None = None,
                    priority: Sequence[str] | None = None) -> InjectionReport:
    """Format memory and report what was kept, what was dropped and the tokens of each section.

    `priority`: fact ids to keep first within the budget (most relevant first), as `format_for_injection`
    passes for a query; the text is formatted the same either way."""
    text, tokens, user_part, history_part, facts, kept, truncated = _fit(memory_data, max_tokens, model, priority)
    encoding = encoding_name_for(model)
    encode = get_encoding(encoding).encode_ordinary
    kept_set = set(kept)
    dropped = [str(facts[i].get("id", "")) for i in _order(facts, len(facts))  # most confident first
               if i not in kept_set and isinstance(facts[i], dict) and one_line(facts[i].get("content", ""))]
    facts_text = "Facts:\n" + "\n".join(_prepared(facts[i], encoding, encode)[0] for i in kept) if kept else ""
    return InjectionReport(
        text=text, tokens=tokens, max_tokens=max_tokens, encoding=encoding, truncated=truncated,
        section_tokens={"User Context": len(encode(user_part)) if user_part else 0,
                        "History": len(encode(history_part)) if history_part else 0,
                        "Facts": tokens if facts_text == text else len(encode(facts_text))},
        kept_fact_ids=[str(facts[i].get("id", "")) for i in kept],
        dropped_fact_ids=dropped, dropped_count=len(dropped), relevant_fact_ids=[str(i) for i in priority or ()],
        facts_max_tokens=max_tokens,
    )


def _truncate(text: str, max_tokens: int, model: str | None) -> tuple[str, int]:
    """Cut `text` at character level so that it, plus the truncation marker, fits in `max_tokens`."""
    marker_tokens = count_tokens(TRUNCATION_MARKER, model)
    if max_tokens < marker_tokens:
        return "", 0
    prefix = truncate_to_tokens(text, max_tokens - marker_tokens, model)
    out = prefix + TRUNCATION_MARKER
    tokens = count_tokens(out, model)
    while tokens > max_tokens and prefix:  # the marker can merge with the prefix's last characters
        prefix = prefix[:-max(1, len(prefix) // 50)]
        out = prefix + TRUNCATION_MARKER
        tokens = count_tokens(out, model)
    return out, tokens


def format_memory_for_injection(memory_data: Mapping[str, Any] | None, max_tokens: int = 2000, *, model: str | None = None,
                                priority: Sequence[str] | None = None) -> str:
    """The memory text for a system prompt, at most `max_tokens` tokens in `model`'s encoding; the facts
    whose ids are in `priority` are kept first."""
    return _fit(memory_data, max_tokens, model, priority)[0]


__all__ = ["format_memory_for_injection", "build_injection", "InjectionReport", "InjectedPassage", "count_tokens",
           "fact_line"]
