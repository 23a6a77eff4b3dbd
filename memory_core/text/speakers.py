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

A conversation of two sides with neither names nor labels may still say who is who: people address each other
("Thanks, Melanie!", "Hi Mel, guess what?", "¡Qué bien, Andrés!"). `addressed_speakers` takes the name one side
addresses the other by as that other side's speaker when it is said so at least MIN_ADDRESSED times and is at least
ADDRESSED_SHARE of the names that side addresses (a nickname that begins a longer name counts as that name), when
the side so named never says the name itself (both talk to the dog: "Good boy, Max!", "Does Max like the beach?"),
and it is not a word that addresses anyone ("guys", "team", "Mom", "buddy").
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


MIN_ADDRESSED = 2
ADDRESSED_SHARE = 0.75

_NAME = r"([^\W\d_][\w'’-]*(?: [^\W\d_][\w'’-]*)?)"
# Words that open a greeting, thanks or cheer before the name (English, Spanish, Portuguese, German, French,
# Italian, Dutch); a name after one of them, then a stop, is addressed: "Hi Priya,", "Thanks Mel.", "Salut Théo !".
_OPENERS = (r"hi|hey|hello|hiya|heya|yo|dear|thanks|thank you|thx|cheers|congrats|congratulations|welcome|bye"
            r"|goodbye|good morning|good evening|good night|morning|evening|night|hola|gracias|adiós|buenos días"
            r"|oi|olá|ola|obrigad[oa]|tchau|bom dia|hallo|servus|moin|danke|tschüss|guten morgen|salut|bonjour"
            r"|bonsoir|merci|coucou|ciao|grazie|buongiorno|hoi|dag|doei|bedankt|dank je|goedemorgen")
_OPENER = re.compile(rf"(?i:{_OPENERS})")
_STOP = r"(?=\s*[,!.?;:…)]|\s*$)"
_ADDRESSED = [
    re.compile(rf"(?:^|[.!?¡¿…]\s*|[¡¿])(?i:{_OPENERS}),?\s+{_NAME}{_STOP}"),  # "Hi Mel," "¡Hola Lucía!"
    re.compile(rf",\s+{_NAME}\s*[!.?…]"),  # "That's great, Caroline!" "Gute Reise, Lena!"
]
# Words that address somebody without naming them (and words a capital may begin a sentence with).
_NOT_NAMES = frozenset("""
    guys everyone everybody all team folks friends friend buddy bud pal mate man dude bro sis girl girls boy boys
    sir madam maam ma'am miss mister love dear darling honey sweetie sweetheart babe baby kid kids son
    mom mum mommy mummy mama mother dad daddy papa father grandma granny grandpa nana auntie aunt uncle
    god lord jesus people y'all yall there you again so too though then now today tomorrow
    monday tuesday wednesday thursday friday saturday sunday
    amigo amiga amigos chicos chicas todos cariño mamá papá mãe pai gente pessoal
    leute alle freunde mutti vati schatz les amis tous chéri chérie maman ragazzi tutti amore mamma
    jongens allemaal schat
""".split())


def _addressed(text: str) -> list[str]:
    """The names `text` addresses, each place once ("Bye, London!" is read by both patterns)."""
    out = {}
    for pattern in _ADDRESSED:
        for m in pattern.finditer(text):
            name = m.group(1).strip()
            words = name.split()
            if (all(word[0].isupper() for word in words) and name.casefold() not in _NOT_NAMES
                    and words[0].casefold() not in _NOT_NAMES and not _OPENER.fullmatch(name)):
                out[m.start(1)] = name
    return list(out.values())


def addressed_speakers(messages: Sequence[dict[str, Any]],
                       roles: Sequence[str] = ("user", "assistant")) -> dict[str, str]:
    """{role: the name its side is addressed by} for the sides of a two-sided conversation that its other side
    addresses by one name (see the module's docstring); sides not so named are left out."""
    said: dict[str, list[str]] = {}
    for m in messages:
        if m.get("role") in roles and isinstance(m.get("content"), str):
            said.setdefault(m["role"], []).append(m["content"])
    if len(said) != 2:
        return {}
    first, second = said
    found: dict[str, str] = {}
    for speaker_side, other_side in ((first, second), (second, first)):
        names: dict[str, int] = {}
        for text in said[other_side]:
            for name in _addressed(text):
                names[name] = names.get(name, 0) + 1
        for short in sorted(names, key=len):  # "Mel" counts as "Melanie" when she is called both
            longer = [n for n in names if n != short and len(short) >= 3 and n.startswith(short)]
            if len(longer) == 1:
                names[longer[0]] += names.pop(short)
        if not names:
            continue
        name, n = max(names.items(), key=lambda item: item[1])
        own = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        if (n >= MIN_ADDRESSED and n >= ADDRESSED_SHARE * sum(names.values())
                and not any(own.search(text) for text in said[speaker_side])):
            found[speaker_side] = name
    if len(set(found.values())) < len(found):  # both sides called the same: neither is known
        return {}
    return found


__all__ = ["speaker_labels", "addressed_speakers"]
