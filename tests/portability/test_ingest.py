"""Conversations from the formats the Ingest page accepts; garbage gets a clear IngestError."""

from __future__ import annotations

import json

import pytest

from memory_core import IngestError
from memory_core.portability.ingest import from_locomo, parse_conversation

EXPECTED = [{"role": "user", "content": "I love tea."}, {"role": "assistant", "content": "Noted."}]


@pytest.mark.parametrize("text", [
    "User: I love tea.\nAssistant: Noted.",
    "**User:** I love tea.\n\n**Assistant:** Noted.",
    "## User: I love tea.\n## Assistant: Noted.",
    "Human: I love tea.\nAI: Noted.",
    json.dumps(EXPECTED),
    json.dumps({"messages": EXPECTED}),
    "\n".join(json.dumps(m) for m in EXPECTED),
    json.dumps([{"speaker": "user", "text": "I love tea."}, {"speaker": "assistant", "text": "Noted."}]),
])
def test_formats(text):
    assert parse_conversation(text) == EXPECTED


def test_multiline_turns_and_bytes():
    text = "User: line one\nline two\nAssistant: ok".encode("utf-8-sig")
    assert parse_conversation(text, "chat.txt")[0]["content"] == "line one\nline two"


def test_locomo_sample():
    sample = {"sample_id": "x", "conversation": {"speaker_a": "Ana", "speaker_b": "Bo",
              "session_1_date_time": "1 May", "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "hi"},
                                                            {"speaker": "Bo", "dia_id": "D1:2", "text": "hey"}],
              "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "again"}]}}
    assert [m["role"] for m in parse_conversation(json.dumps([sample]))] == ["user", "assistant", "user"]
    assert from_locomo(sample, session=2) == [{"role": "user", "content": "again"}]


@pytest.mark.parametrize("data", ["", "   ", "no speakers here at all", b"\x00\x01\x02binary", b"\xff\xfe\xfa",
                                  '{"foo": 1}', "[1, 2]", '[{"role": "wizard", "content": "x"}]', b"x" * (6 * 1024 * 1024)])
def test_garbage_is_a_clear_error(data):
    with pytest.raises(IngestError):
        parse_conversation(data, "upload.json" if isinstance(data, str) and data.startswith(("{", "[")) else None)
