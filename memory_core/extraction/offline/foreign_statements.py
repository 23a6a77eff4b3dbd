"""Statements of the user in German, French, Spanish, Portuguese and Italian that the English rules do not read, put in
English clauses the rules know: where the user works ("Ich arbeite bei Siemens" -> "I work at Siemens"), a diet ("Ich
bin Veganerin" -> "I'm vegan"), how many children they have ("Tengo dos hijos" -> "I have 2 kids") and an allergy
("Je suis allergique aux arachides" -> "I'm allergic to arachides": what it is to stays in its own words, there is no
dictionary offline), and a change said with "now" ("Maintenant je travaille chez Peugeot", "Jetzt bin ich Veganer") or a
move ("Mi sono trasferito a Bologna", "Je viens de déménager à Gand"). Measured on tests/data/extractor_statements_p.json
(see tests/extraction/test_extractor_table.py) and tests/data/corrections_x.json (test_corrections_fresh.py).
"""

from __future__ import annotations

import re

_ORG = r"(?P<org>(?-i:[A-ZÀ-Ý])[\w&.'-]*(?:\s+(?-i:[A-ZÀ-Ý])[\w&.'-]*){0,3})"
_EMPLOYER = re.compile(r"^(?i:ich\s+arbeite\s+(?:jetzt\s+|nun\s+)?(?:bei|für)|je\s+travaille\s+(?:chez|pour)"
                       r"|lavoro\s+(?:per|presso|da|alla|al)|trabajo\s+(?:en|para)|trabalho\s+(?:na|no|em|para))\s+"
                       r"(?i:(?:die|der|das|den|la|le|l'|el|a|o|il|lo)\s*)?" + _ORG
                       + r"(?=\s*(?:[,.!;]|$|\s+(?i:seit|depuis|desde|da|há|hace)\b))")
_DIET = re.compile(r"^(?i:ich\s+bin|je\s+suis|soy|sou|sono)\s+(?i:(?P<vegan>vegan(?:o|a|e|er|erin)?|végane?)"
                   r"|(?P<vegetarian>vegetari(?:er|erin|ano|ana|en|enne)|végétarien(?:ne)?))\b")
_NUMBERS = {w: n for n, ws in enumerate(["", "ein eine einen einem un une uno una um uma", "zwei deux dos dois due",
                                         "drei trois tres três tre", "vier quatre cuatro quatro quattro",
                                         "fünf cinq cinco cinque"]) for w in ws.split()}
_KIDS = re.compile(r"^(?i:ich\s+habe|j'ai|tengo|tenho|ho)\s+(?P<n>\d|[a-zäöüéêç]+)\s+(?i:kinder|kind|sohn|söhne|tochter"
                   r"|töchter|enfants?|fils|filles?|hijos?|hijas?|filhos?|filhas?|figli|figlio|figlie|figlia|bambini)\b")
_ALLERGY = re.compile(r"^(?i:ich\s+bin\s+allergisch\s+(?:gegen|auf)|je\s+suis\s+allergique\s+(?:aux?|à\s+la|à\s+l'|à)"
                      r"|soy\s+al[ée]rgic[oa]\s+(?:a\s+las|a\s+los|al|a\s+la|a)|sou\s+al[ée]rgic[oa]\s+(?:aos?|às?|a)"
                      r"|sono\s+allergic[oa]\s+(?:alle|agli|ai|al|alla|allo|a))\s*(?P<what>[^,.;!?]{2,60}?)\s*(?:[,.;!?]|$)")


# "Maintenant je travaille chez X", "Jetzt bin ich Veganer": a change said with "now" first (German puts the verb
# before "ich" then); "Mi sono trasferito a Bologna": a move.
_NOW_FIRST = re.compile(r"^(?i:maintenant|désormais|ahora|agora|adesso|ora)\s*,?\s+")
_JETZT = re.compile(r"^(?i:jetzt|nun|inzwischen|mittlerweile)\s+(?P<verb>(?i:bin|habe|arbeite|wohne|lebe))\s+(?i:ich)\b")
_MOVED = re.compile(r"^(?i:mi\s+sono\s+(?:appena\s+)?trasferit[oa]\s+(?:a|in)|je\s+viens\s+de\s+déménager\s+(?:à|a|en)"
                    r"|j'ai\s+déménagé\s+(?:à|a|en)|ich\s+bin\s+(?:gerade\s+)?nach(?=\s+\S+\s+(?:um)?gezogen\b))\s+"
                    + _ORG.replace("org", "place"))


def foreign_clauses(sentence: str) -> list[str] | None:
    """English clauses for a statement of one of the kinds above, or None."""
    sentence = _JETZT.sub(lambda m: f"ich {m.group('verb')}", _NOW_FIRST.sub("", sentence, count=1), count=1)
    if (m := _MOVED.match(sentence)) is not None:
        return [f"I moved to {m.group('place')}"]
    if (m := _EMPLOYER.match(sentence)) is not None:
        return [f"I work at {m.group('org')}"]
    if (m := _DIET.match(sentence)) is not None:
        return ["I'm vegan" if m.group("vegan") else "I'm vegetarian"]
    if (m := _KIDS.match(sentence)) is not None:
        word = m.group("n").casefold()
        n = int(word) if word.isdigit() else _NUMBERS.get(word)
        return None if not n else [f"I have {n} {'kid' if n == 1 else 'kids'}"]
    if (m := _ALLERGY.match(sentence)) is not None:
        return [f"I'm allergic to {m.group('what').strip()}"]
    return None
