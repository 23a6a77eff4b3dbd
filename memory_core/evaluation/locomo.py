"""Conversations in LoCoMo's format, read and checked: a list of samples, each with `conversation` (`speaker_a`,
`speaker_b`, `session_N` lists of turns `{speaker, dia_id, text}`, `session_N_date_time`) and `qa` (`question`,
`answer`, `evidence` as dia ids, `category` 1-5, 5 being adversarial: unanswerable by design)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from memory_core.portability.safety import load_json, read_file

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ANSWERABLE = (1, 2, 3, 4)  # category 5 is left out of every figure, as the data's README says for recall
_SESSION = re.compile(r"session_(\d+)")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y", "%Y-%m-%d %H:%M",
                 "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")
UNDATED = datetime(2000, 1, 1, 12, 0, tzinfo=timezone.utc)  # session N without a readable date: this + N days


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Session:
    number: int
    when: datetime  # timezone-aware UTC
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    sample: int  # index of its sample in the file
    question: str
    answer: str
    evidence: frozenset[str]  # dia ids
    category: int


@dataclass(frozen=True)
class Sample:
    sample_id: str
    speakers: tuple[str, str]  # speaker_a (the "user" of the pipeline mode), speaker_b
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def load_samples(path: str | Path) -> list[Sample]:
    """The samples of a LoCoMo-format JSON file; ValueError (one line, naming the place) when it is not one."""
    path = Path(path)
    data = load_json(read_file(path), path.name)  # its errors name the file
    try:
        return parse_samples(data)
    except ValueError as exc:
        raise ValueError(f"{path.name}: {exc}") from None


def parse_samples(data: Any) -> list[Sample]:
    """Samples from parsed JSON; ValueError naming the first thing that is wrong."""
    if not isinstance(data, list) or not data:
        raise ValueError("expected a JSON list of LoCoMo samples (objects with 'conversation' and 'qa')")
    return [_sample(n, item) for n, item in enumerate(data)]


def _sample(n: int, item: Any) -> Sample:
    where = f"sample {n}"
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected an object with 'conversation' and 'qa'")
    convo, qa = item.get("conversation"), item.get("qa")
    if not isinstance(convo, dict):
        raise ValueError(f"{where}: 'conversation' must be an object")
    if not isinstance(qa, list):
        raise ValueError(f"{where}: 'qa' must be a list")
    numbers = sorted(int(m.group(1)) for key in convo if (m := _SESSION.fullmatch(key)))
    if not numbers:
        raise ValueError(f"{where}: the conversation has no session_N list of turns")
    sessions = tuple(_session(where, number, convo) for number in numbers)
    first = next((t.speaker for s in sessions for t in s.turns), "")
    speaker_a = convo.get("speaker_a") if isinstance(convo.get("speaker_a"), str) else first
    speaker_b = convo.get("speaker_b") if isinstance(convo.get("speaker_b"), str) else ""
    questions = tuple(_question(f"{where}, qa {i}", n, q) for i, q in enumerate(qa))
    sample_id = item.get("sample_id")
    return Sample(str(sample_id) if sample_id is not None else f"sample-{n}", (speaker_a, speaker_b), sessions, questions)


def _session(where: str, number: int, convo: dict) -> Session:
    turns = convo[f"session_{number}"]
    if not isinstance(turns, list):
        raise ValueError(f"{where}: session_{number} must be a list of turns")
    parsed = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not all(isinstance(turn.get(k), str) for k in ("speaker", "dia_id", "text")):
            raise ValueError(f"{where}: session_{number} turn {i} needs string 'speaker', 'dia_id' and 'text'")
        parsed.append(Turn(turn["dia_id"].strip(), turn["speaker"], turn["text"]))
    return Session(number, session_date(convo.get(f"session_{number}_date_time"), number), tuple(parsed))


def session_date(value: Any, number: int) -> datetime:
    """The session's date and time ("1:56 pm on 8 May, 2023"), as UTC; an unreadable one counts days from 2000."""
    if isinstance(value, str):
        text = " ".join(value.split())
        for fmt in _DATE_FORMATS:
            try:
                return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)
            except ValueError:
                continue
    return UNDATED + timedelta(days=number)


def _question(where: str, sample: int, q: Any) -> Question:
    if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not q["question"].strip():
        raise ValueError(f"{where}: needs a non-empty string 'question'")
    category = q.get("category")
    if isinstance(category, bool) or category not in CATEGORIES:
        raise ValueError(f"{where}: 'category' must be one of 1-5")
    evidence = q.get("evidence", [])
    if not isinstance(evidence, list):
        raise ValueError(f"{where}: 'evidence' must be a list of dia ids")
    # Some entries hold several ids in one string ("D8:6; D9:17"), as in the original data.
    ids = frozenset(e.strip() for item in evidence for e in str(item).replace(";", ",").split(",") if e.strip())
    answer = q.get("answer", q.get("adversarial_answer", ""))
    return Question(sample, q["question"], "" if answer is None else str(answer), ids, category)
