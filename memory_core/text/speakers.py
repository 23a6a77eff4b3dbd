"""Who said each message of a conversation written as a transcript: "Caroline: I went to a support group".

Many agents and evaluation harnesses give a conversation between people as chat messages whose content starts with
the speaker's name, with no `name` field (roles only tell the two sides apart, or every message is the user's). An
episode then keeps the name as the speaker and the rest as what was said, as it would from `name`: the turn is
indexed as "Caroline: I went ...", not "user: Caroline: I went ...", and a question that names Caroline ranks her
turns (search.asked).

A label is read only when the conversation is written that way throughout: at least MIN_LABELLED messages, and at
least LABELLED_SHARE of the messages without a `name`, begin with a name-like label ("Name:" or "Name：", one to
three words that start with a capital or an uncased letter, as "Jean-Luc", "María José", "O'Brien", "李雷"; not a
heading word such as "Note", "Update", "Step", nor one letter, as a transcript's "Q:" and "A:"), and they use at
most MAX_SPEAKERS labels. A single "Note: buy milk" among plain messages is text, as is everything else.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

MIN_LABELLED = 2
LABELLED_SHARE = 0.8
MAX_SPEAKERS = 8
LABEL_CHARS = 40

_NAME_WORD = r"[^\W\d_][^\s:：]*"  # a letter, then anything up to a space or a colon (Devanagari's vowel signs are not \w)
# "Name: ", "Name : " (French spacing), "名前：" (a full-width colon needs no space after it)
_LABEL = re.compile(rf"\s*({_NAME_WORD}(?: {_NAME_WORD}){{0,2}})(?:\s?:\s+|\s?：\s*)(?=\S)")
# Words that head a line rather than name who speaks it (English, Portuguese, Spanish, German, French).
_HEADINGS = frozenset("""
    note notes nb ps p.s update edit edited reminder todo to-do tip tips warning caution important info fyi
    question answer summary tl;dr tldr example examples step steps title subject re fwd date time when where
    location address phone email e-mail name status result results output input error errors reason context
    goal goals task tasks source sources link links ingredients agenda topic action actions decision decisions
    problem solution fix bug feature request response reply translation definition meaning quote list total
    day week morning evening today yesterday tomorrow monday tuesday wednesday thursday friday saturday sunday
    nota atualização lembrete pergunta resposta resumo exemplo passo aviso erro tarefa
    actualización recordatorio pregunta respuesta ejemplo paso tarea
    hinweis anmerkung frage antwort zusammenfassung beispiel schritt achtung fehler aufgabe
    remarque rappel réponse résumé exemple étape attention erreur tâche
""".split())


def _label(content: str) -> tuple[str, str] | None:
    """(label, the rest) of a message that begins with a name-like label, else None."""
    m = _LABEL.match(content)
    if m is None:
        return None
    label = m.group(1).rstrip(".")
    first = label[0]  # a capital, or a letter with no case (李雷)
    if (len(label) > LABEL_CHARS or len(label) < 2 or first.islower()
            or label.casefold() in _HEADINGS or label.split()[0].casefold() in _HEADINGS):
        return None
    return label, content[m.end():]


def speaker_labels(messages: Sequence[dict[str, Any]], roles: Sequence[str] = ("user", "assistant")) -> list[tuple[str, str] | None]:
    """For each message, (speaker, what was said) when the conversation is written as a transcript and this
    message carries a label and no `name`; else None (the message is read as it is)."""
    candidates = [i for i, m in enumerate(messages)
                  if m.get("role") in roles and str(m.get("content") or "").strip() and not m.get("name")]
    found = {i: lab for i in candidates if (lab := _label(str(messages[i].get("content") or ""))) is not None}
    labels = {speaker for speaker, _ in found.values()}
    if (len(found) < MIN_LABELLED or len(found) < LABELLED_SHARE * len(candidates) or len(labels) > MAX_SPEAKERS):
        return [None] * len(messages)
    return [found.get(i) for i in range(len(messages))]


__all__ = ["speaker_labels"]
