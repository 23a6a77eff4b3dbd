"""The deterministic (offline) Deep Dream: MEMORY.md rewritten by rules, with no LLM (see `offline_dream`).

Short third-person bullets about the user under `## ` headings, from the current MEMORY.md, what the user said in
the daily logs (and what the assistant said that the user confirmed) and the scope's valid facts: the later of two
statements that disagree wins, near-duplicates are merged. DeepDream (dream.py) puts its reply through the same
guards as an LLM's."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Mapping, Sequence

from memory_core.extraction.offline.heuristics import first_to_third, heuristic_statements, second_to_third, tidy_third_person
from memory_core.extraction.offline.statements import Statement, classify, describe, single_valued, supersedes
from memory_core.text.words import STOPWORDS, stem, words
from memory_core.tiers.core import BULLET, bullets
from memory_core.tiers.daily import split_blocks


# normalise, valid_facts and fact_confidence serve the LLM consolidator and the guards of dream.py too, which
# imports this module (for DeterministicConsolidator), so they live here, below it.

def normalise(text: str) -> str:
    """`text` casefolded, with its white space folded to single spaces."""
    return " ".join(text.casefold().split())


def valid_facts(facts: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The facts (`Fact.to_dict()` dicts) with content and no invalidAt: what a dream may promote and cite."""
    return [f for f in facts if isinstance(f, Mapping) and isinstance(f.get("content"), str) and not f.get("invalidAt")]


def fact_confidence(fact: Mapping[str, Any]) -> float:
    """A fact dict's confidence; 0.5 when it has no usable one."""
    value = fact.get("confidence")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.5


SECTIONS = (("context", "Context"), ("preference", "Preferences"), ("behavior", "Habits"),
            ("knowledge", "Knowledge"), ("goal", "Goals"), ("correction", "Corrections"))
NOTES = "Notes"  # what is about the user but fits no category; always the last heading
_STANDARD = {title.casefold(): title for _, title in SECTIONS} | {c: t for c, t in SECTIONS} | {
    "behaviour": "Habits", "behaviors": "Habits", "habit": "Habits", "goal": "Goals", "notes": NOTES}
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPEAKER = re.compile(r"^(?:\*\*|__)?(user|assistant|agent|ai|system|tool)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*", re.I)
_CONFIRMATION = re.compile(r"^\W*(?:yes|yep|yeah|exactly|right|correct|that's right|that is right|precisely|indeed"
                           r"|absolutely|true)\b", re.I)
_ABOUT_THE_ASSISTANT = re.compile(r"^(?:the\s+)?(?:assistant|agent|ai|bot|model)\b", re.I)
_ABOUT_THE_USER = re.compile(r"^(?:the\s+)?user(?:'s)?\b", re.I)
_FIRST_PERSON = re.compile(r"^\W*(?:(?:oh|well|so|yes|yeah|actually|also|and|but|honestly),?\s+)*(?:i|my)\b", re.I)
_SECOND_PERSON = re.compile(r"\byou(?:r|rs|rself|'re|'ve|'ll|'d)?\b", re.I)
_PLEASANTRY = re.compile(r"^\W*(?:nice to meet|thanks|thank you|noted|got it|sure|of course|happy to|glad|sounds good"
                         r"|you're welcome|great|good (?:luck|morning|night)|hello|hi|hey|welcome|no problem"
                         r"|understood|absolutely)\b", re.I)


@dataclass(frozen=True)
class LogLine:
    day: date
    block: int
    speaker: str | None  # "user", "assistant", another role, or None: written by hand or by an LLM summary
    text: str


def log_lines(daily: list[tuple[date, str]]) -> list[LogLine]:
    """The items of the daily logs, oldest first, with who said them where the line says so ("- User: ...")."""
    out: list[LogLine] = []
    for day, text in daily:
        blocks = [block for _a, _b, block in split_blocks(text)] or [text]
        for n, block in enumerate(blocks):
            for raw in block.splitlines():
                line = _ITEM.sub("", raw).strip()
                if not line or raw.lstrip().startswith("#"):
                    continue
                match = _SPEAKER.match(line)
                speaker = match.group(1).lower() if match else None
                speaker = "assistant" if speaker in ("agent", "ai") else speaker
                line = line[match.end():].strip() if match else line
                if line:
                    out.append(LogLine(day, n, speaker, line))
    return out


def _key(text: str) -> str:
    return normalise(re.sub(r"[.!]+$", "", text.strip()))


def line_statements(line: LogLine, following: LogLine | None) -> tuple[list[Statement], str | None]:
    """What a log line says about the user, or why it says nothing worth keeping."""
    text = line.text
    if line.speaker == "assistant":
        confirmed = (following is not None and following.speaker == "user" and following.block == line.block
                     and following.day == line.day and _CONFIRMATION.match(following.text))
        content = second_to_third(text) if confirmed else None
        return ([describe(content, None, 0.6)], None) if content else ([], "said by the assistant")
    if line.speaker not in (None, "user"):
        return [], "not said by the user"
    if line.speaker is None and (_ABOUT_THE_ASSISTANT.match(text) or _SECOND_PERSON.search(text)):
        return [], "said by the assistant"
    if line.speaker is None and _ABOUT_THE_USER.match(text):
        return [describe(tidy_third_person(text), None, 0.7)], None
    found: list[Statement] = []
    for sentence in _SENTENCE_END.split(text):
        said = heuristic_statements(sentence)
        general = None if said else first_to_third(sentence)
        found += said or ([describe(general, None, 0.5)] if general else [])
    if found:
        return found, None
    if line.speaker is None and not _FIRST_PERSON.match(text) and len(text) >= 4 and not text.endswith("?"):
        return [Statement(tidy_third_person(text), None, 0.4)], None  # a note written for the log: kept as it is
    return [], "a question, greeting or acknowledgement"


def previous_statements(bullet: str, assistant_said: set[str],
                        legacy: bool = False) -> tuple[list[Statement], str | None]:
    """What a MEMORY.md bullet still says, and why it is retired when it is not carried over as it is: the
    assistant's words (older offline dreams copied them), or a first-person sentence (rewritten, or dropped when
    nothing lasting is in it). In a `legacy` MEMORY.md (no headings, first-person bullets: written by an older
    offline dream, which copied every log line) a bullet neither about the user nor by them is the assistant's."""
    if _key(bullet) in assistant_said or _PLEASANTRY.match(bullet):
        return [], "the assistant's words"
    if bullet.rstrip().endswith("?"):
        return [], "a question"
    if _FIRST_PERSON.match(bullet):
        found = heuristic_statements(bullet)
        return found, ("rewritten in the third person" if found else "a first-person sentence with nothing lasting")
    if _SECOND_PERSON.search(bullet) and not re.search(r"\bUser\b", bullet):
        return [], "the assistant's words"
    if legacy and not _ABOUT_THE_USER.match(bullet):
        return [], "not about the user (an older offline dream copied the assistant's words)"
    return [describe(tidy_third_person(bullet), None, 1.0)], None


@dataclass
class _Entry:
    statement: Statement
    origin: str  # "memory", "log" or "fact"
    heading: str | None = None  # the MEMORY.md heading it stands under; None: its category's
    bullet: str | None = None  # the MEMORY.md bullet it comes from
    # What it was read from: ("fact", id), ("log", YYYY-MM-DD), ("memory", the previous bullet); a twin's are added
    sources: frozenset[tuple[str, str]] = frozenset()

    @property
    def section(self) -> str:
        if self.heading:
            return self.heading
        category = self.statement.category
        if category in (None, "correction"):
            category = classify(self.statement.content) or category
        return dict(SECTIONS).get(category or "", NOTES)


def _stem_set(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS)


def _same_values(a: Statement, b: Statement) -> bool:
    """Whether the two share a single-valued slot, and every one they share holds the same value."""
    theirs = {s.key: s for s in b.slots}
    shared = [(s, theirs[s.key]) for s in a.slots if s.key in theirs and single_valued(s.key)]
    return bool(shared) and all((x.value, x.negated) == (y.value, y.negated) for x, y in shared)


class _Kept:
    """The entries kept so far, in order, indexed by slot, word and text, so that a new statement meets only
    the entries it could supersede or repeat (a dream may read thousands of lines)."""

    def __init__(self) -> None:
        self.entries: dict[int, _Entry] = {}
        self.rank: dict[int, int] = {}  # the place in MEMORY.md: a replacement takes the place of what it replaces
        self._stems: dict[int, frozenset[str]] = {}
        self._by_slot: dict[str, set[int]] = {}
        self._by_stem: dict[str, set[int]] = {}
        self._by_text: dict[str, set[int]] = {}
        self._next = 0

    def _postings(self, i: int) -> list[set[int]]:
        statement = self.entries[i].statement
        return ([self._by_slot.setdefault(s.key, set()) for s in statement.slots]
                + [self._by_stem.setdefault(w, set()) for w in self._stems[i]]
                + [self._by_text.setdefault(normalise(statement.content), set())])

    def add(self, entry: _Entry, rank: int | None = None) -> None:
        i, self._next = self._next, self._next + 1
        self.entries[i], self.rank[i] = entry, i if rank is None else rank
        self._stems[i] = _stem_set(entry.statement.content)
        for posting in self._postings(i):
            posting.add(i)

    def remove(self, i: int) -> int:
        """Forget entry `i`; its place, for what replaces it."""
        for posting in self._postings(i):
            posting.discard(i)
        del self.entries[i], self._stems[i]
        return self.rank.pop(i)

    def superseded_by(self, statement: Statement) -> list[int]:
        """The kept entries `statement` supersedes, in order."""
        if statement.negated and statement.cue:  # "User quit smoking": the word-cover rule may hit any entry
            ids: set[int] = set(self.entries)
        else:
            ids = set().union(*(self._by_slot.get(s.key, set()) for s in statement.slots))
        found = [i for i in ids if supersedes(statement, self.entries[i].statement)]
        return sorted(found, key=self.rank.__getitem__)

    def twin(self, statement: Statement) -> int | None:
        """The first kept entry that says the same: the same text, the same values in a single-valued slot, or
        nearly the same words (as `_similar` counts them), never with the opposite polarity."""
        mine = _stem_set(statement.content)
        overlap = Counter(i for w in mine for i in self._by_stem.get(w, ()))
        ids = set(self._by_text.get(normalise(statement.content), ()))
        ids |= {i for i, n in overlap.items() if n / min(len(mine), len(self._stems[i])) >= 0.85}
        for slot in statement.slots:
            if single_valued(slot.key):
                ids |= {i for i in self._by_slot.get(slot.key, ())
                        if _same_values(statement, self.entries[i].statement)}
        ids = {i for i in ids if self.entries[i].statement.negated == statement.negated}
        return min(ids, key=self.rank.__getitem__) if ids else None

    def in_order(self) -> list[_Entry]:
        return [self.entries[i] for i in sorted(self.entries, key=self.rank.__getitem__)]


@dataclass
class OfflineDream:
    """The deterministic consolidation: the new MEMORY.md by section, and what happened to everything read."""

    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    retired: dict[str, str] = field(default_factory=dict)  # previous bullet -> why it is not carried over
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (older statement, the later one)
    added: Counter = field(default_factory=Counter)  # origin -> bullets
    merged: int = 0
    ignored: Counter = field(default_factory=Counter)  # why -> log lines left out
    invalidated: int = 0
    left_out: list[str] = field(default_factory=list)  # over the cap
    previous: int = 0
    sources: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)  # bullet -> what it came from

    def markdown(self) -> str:
        return "\n\n".join(f"## {title}\n" + "\n".join(f"- {b}" for b in items)
                             for title, items in self.sections) + "\n"

    def narrative(self, days: int, max_bullets: int) -> str:
        count = sum(len(items) for _, items in self.sections)
        lines = [f"Deterministic consolidation (offline): {count} bullets under {len(self.sections)} headings. "
                 f"Kept {self.added['memory']} of {self.previous} previous bullets, added {self.added['log']} from "
                 f"{days} daily file(s) and {self.added['fact']} from stored facts, merged {self.merged} duplicates."]
        lines += [f'Superseded "{old}" by "{new}" (the later statement wins).' for old, new in self.superseded[:20]]
        lines += [f'Retired "{bullet}": {why}.' for bullet, why in list(self.retired.items())[:20]
                  if not why.startswith("superseded")]
        if self.ignored:
            lines.append("Left out of the logs: " + ", ".join(f"{n} line(s) {why}" for why, n in self.ignored.items())
                         + ".")
        if self.invalidated:
            lines.append(f"Left out {self.invalidated} statement(s) of facts invalidated in the store.")
        if self.left_out:
            lines.append(f"Left out {len(self.left_out)} over the cap of {max_bullets}: "
                         + "; ".join(self.left_out[:10]) + ".")
        return "\n".join(lines)


def _timeline(current: str, daily: list[tuple[date, str]], facts: Sequence[Mapping[str, Any]],
              dream: OfflineDream) -> list[_Entry]:
    """Everything that may go into MEMORY.md, oldest first: the current bullets, then the log lines and the valid
    facts by day (a fact after the lines of its day: the store has the last word on what is current)."""
    lines = log_lines(daily)
    assistant_said = {_key(part) for line in lines if line.speaker == "assistant"
                      for part in [line.text, *_SENTENCE_END.split(line.text)]}
    legacy = "\n## " not in f"\n{current}" and any(_FIRST_PERSON.match(b) for b in bullets(current))
    timeline: list[tuple[tuple[Any, ...], _Entry]] = []
    heading: str | None = None
    for raw in current.splitlines():
        if raw.startswith("## "):
            title = raw[3:].strip()
            heading = _STANDARD.get(title.casefold(), title) or None
            continue
        match = BULLET.match(raw)
        if not match:
            continue
        dream.previous += 1
        found, why = previous_statements(match.group(1), assistant_said, legacy)
        if why:
            dream.retired[match.group(1)] = why
        for statement in found:
            timeline.append(((date.min, 0, len(timeline)), _Entry(statement, "memory", heading, match.group(1),
                                                                   frozenset([("memory", match.group(1))]))))
    for n, line in enumerate(lines):
        following = lines[n + 1] if n + 1 < len(lines) else None
        found, why = line_statements(line, following)
        if why:
            dream.ignored[why] += 1
        for statement in found:
            source = frozenset([("log", line.day.isoformat())])
            timeline.append(((line.day, 1, n), _Entry(statement, "log", sources=source)))
    for fact in valid_facts(facts):
        when = str(fact.get("validFrom") or fact.get("createdAt") or "")
        try:
            day = date.fromisoformat(when[:10])
        except ValueError:
            day = date.min
        category = fact.get("category")
        statement = describe(fact["content"], category if isinstance(category, str) else None, fact_confidence(fact))
        source = frozenset([("fact", fact["id"])]) if isinstance(fact.get("id"), str) else frozenset()
        timeline.append(((day, 2, when), _Entry(statement, "fact", sources=source)))
    timeline.sort(key=lambda item: item[0])
    return [entry for _key_, entry in timeline]


def offline_dream(current: str, daily: list[tuple[date, str]], max_bullets: int,
                  facts: Sequence[Mapping[str, Any]] = ()) -> OfflineDream:
    """Consolidate without an LLM: short third-person bullets about the user under `## ` headings, from the
    current MEMORY.md, what the user said in the logs (and what the assistant said that the user confirmed) and
    the valid facts; the later of two statements that disagree wins; near-duplicates merged."""
    dream = OfflineDream()
    gone = {_key(f["content"]) for f in facts if isinstance(f, Mapping) and isinstance(f.get("content"), str)
            and f.get("invalidAt")} - {_key(f["content"]) for f in valid_facts(facts)}
    kept = _Kept()
    for entry in _timeline(current, daily, facts, dream):
        statement = entry.statement
        if _key(statement.content) in gone:
            dream.invalidated += 1
            continue
        replaced = kept.superseded_by(statement)
        if replaced:
            entry.heading = entry.heading or kept.entries[replaced[0]].heading  # stays where a person put it
            for i in replaced:
                old = kept.entries[i]
                dream.superseded.append((old.statement.content, statement.content))
                if old.bullet is not None:
                    dream.retired.setdefault(old.bullet, f'superseded by "{statement.content}"')
            kept.add(entry, min(kept.remove(i) for i in replaced))
            continue
        twin = kept.twin(statement)
        if twin is None:
            kept.add(entry)
            continue
        dream.merged += 1
        older = kept.entries[twin]
        older.sources |= entry.sources
        if len(statement.content) > len(older.statement.content):  # the fuller wording, in the older one's place
            kept.add(_Entry(statement, older.origin, older.heading, older.bullet, older.sources), kept.remove(twin))
    entries = kept.in_order()
    if len(entries) > max_bullets:  # the least sure go first, the newest of equals before the older
        weight = [1.0 if e.origin == "memory" else e.statement.confidence for e in entries]
        drop = set(sorted(range(len(entries)), key=lambda i: (weight[i], -i))[:len(entries) - max_bullets])
        dream.left_out = [entries[i].statement.content for i in sorted(drop)]
        entries = [e for i, e in enumerate(entries) if i not in drop]
    dream.added = Counter(e.origin for e in entries if e.origin != "memory")
    dream.added["memory"] = len({e.bullet for e in entries if e.origin == "memory"})
    titles = [t for _, t in SECTIONS]
    placed = [(e.section, e.statement.content) for e in entries]
    order = [t for t in titles if any(section == t for section, _ in placed)]
    order += list(dict.fromkeys(section for section, _ in placed if section not in titles and section != NOTES))
    order += [NOTES] if any(section == NOTES for section, _ in placed) else []
    dream.sections = [(title, [text for section, text in placed if section == title]) for title in order]
    for e in entries:
        dream.sources[e.statement.content] = dream.sources.get(e.statement.content, frozenset()) | e.sources
    return dream


class DeterministicConsolidator:
    """Offline: what an LLM would write, by rules (see `offline_dream`)."""

    offline = True

    def consolidate(self, current: str, daily: list[tuple[date, str]], max_bullets: int, *,
                    facts: Sequence[Mapping[str, Any]] = ()) -> tuple[str, int, int]:
        dream = offline_dream(current, daily, max_bullets, facts)
        memory = dream.markdown() if dream.sections else ""
        return f"[MEMORY]\n{memory}\n[DREAM]\n{dream.narrative(len(daily), max_bullets)}\n", 0, 0

    def review(self, current: str, daily: list[tuple[date, str]],
               facts: Sequence[Mapping[str, Any]] = ()) -> OfflineDream:
        """The consolidation with no cap: what it retires on purpose, and what each bullet was read from."""
        return offline_dream(current, daily, 10**6, facts)
