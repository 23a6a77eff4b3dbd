"""Question answering from the injected memory, judged by the model: the usual LoCoMo LLM-judge protocol.

The model answers each question from the memory text that `format_for_injection(query=question)` gives (and
nothing else), briefly; then, in a separate call, it labels that answer CORRECT or WRONG against the gold
answer, generously: the same fact or the same date in other words is correct."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from memory_core.llm.base import ChatModel

ANSWER_PROMPT = """You answer questions about people from what a memory system remembers of their conversations.
Use only the memory below. Where the memory says when something happened relative to a date (for example
"last year" in a conversation of 8 May 2023), work out the actual date. If the memory does not say, answer with
your best guess from it. Answer in a short phrase (at most a dozen words), with no explanation.

<memory>
{memory}
</memory>"""

JUDGE_PROMPT = """Your task is to label an answer to a question as CORRECT or WRONG. You are given a question,
the gold (ground truth) answer and a generated answer. The gold answer is usually short; the generated answer may
be longer. Be generous: if the generated answer states the same thing as the gold answer (the same fact, person,
place or thing), it is CORRECT. For questions about time, a generated answer naming the same date or period as
the gold answer is CORRECT even in another format ("May 7th" for "7 May 2023"). Otherwise it is WRONG.
Reply with JSON only: {"label": "CORRECT"} or {"label": "WRONG"}."""

LABEL_SCHEMA = {"type": "object", "properties": {"label": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
                "required": ["label"], "additionalProperties": False}
_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")


@dataclass
class Verdict:
    answer: str
    correct: bool
    input_tokens: int
    output_tokens: int


# A short answer, and a verdict of one word in JSON.
ANSWER_OUTPUT_TOKENS = 128
VERDICT_OUTPUT_TOKENS = 24


def answer_and_judge(llm: ChatModel, memory_text: str, question: str, gold: str) -> Verdict:
    """The model's answer from `memory_text`, and its verdict against `gold`. LLMError when a call fails."""
    answer = llm.complete([{"role": "system", "content": ANSWER_PROMPT.format(memory=memory_text or "(nothing)")},
                           {"role": "user", "content": question}], max_tokens=ANSWER_OUTPUT_TOKENS)
    judged = llm.complete([{"role": "system", "content": JUDGE_PROMPT},
                           {"role": "user", "content": f"Question: {question}\nGold answer: {gold}\n"
                                                       f"Generated answer: {answer.text.strip()}"}],
                          json_schema=LABEL_SCHEMA, max_tokens=VERDICT_OUTPUT_TOKENS)
    return Verdict(answer.text.strip(), label(judged.text) == "CORRECT", answer.input_tokens + judged.input_tokens,
                   answer.output_tokens + judged.output_tokens)


def label(reply: str) -> str:
    """CORRECT or WRONG from the judge's reply (JSON, or a bare word); WRONG when it says neither."""
    try:
        value = json.loads(reply)
        if isinstance(value, dict) and str(value.get("label", "")).upper() in ("CORRECT", "WRONG"):
            return str(value["label"]).upper()
    except ValueError:
        pass
    found = _LABEL.search(reply.upper())
    return found.group(1) if found else "WRONG"
