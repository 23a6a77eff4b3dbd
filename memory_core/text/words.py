"""Small text helpers: words, stop words and light stemming for the heuristics, and a text's hash."""

from __future__ import annotations

import hashlib
import re

_WORD = re.compile(r"[\w']+", re.UNICODE)
# Bidirectional controls (embeddings, overrides, isolates, the LRM/RLM/ALM marks): invisible, they make
# "\u202egnp.exe" read as "exe.png", so text entering memory is stored without them.
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

STOPWORDS = frozenset("""a an and are as at be been but by can could did do does for from had has have he her his
how i if in into is it its just me my no not of on or our she so than that the their them then there these they
this to too up us was we were what when where which who why will with would you your yours user users assistant
about also very really more most some any all much many like get got one two out over after before again now
""".split())


# Numbers said in words, as digits: "two kids" and "2 kids" say one thing.
NUMBER_WORDS = {w: str(n) for n, w in enumerate("""zero one two three four five six seven eight nine ten eleven twelve
thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty""".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                     "ninety": "90", "hundred": "100"})

# Words that say who a person or an animal is to the user ("my sister", "my dog", "User's brother Sam").
RELATIONS = frozenset("""daughter son wife husband partner spouse brother sister mother father mom mum dad parent
child kid kids baby friend colleague coworker co-worker boss manager neighbour neighbor cousin aunt uncle niece
nephew grandson granddaughter grandmother grandfather grandma grandpa girlfriend boyfriend fiancé fiancée fiance
fiancee roommate flatmate teacher doctor dentist therapist coach tutor mentor client dog cat pet puppy kitten
parrot horse hija hijo esposa esposo hermano hermana madre padre amigo amiga tochter sohn frau mann bruder
schwester mutter vater freund freundin hund katze fille fils femme mari frère soeur sœur mère père ami amie chien
chat filha filho irmão irmã mãe pai amiga cachorro gato""".split())


def strip_bidi(text: str) -> str:
    """`text` without bidirectional control characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C)."""
    return _BIDI_CONTROLS.sub("", text)


def words(text: str) -> list[str]:
    return [w.strip("'").casefold() for w in _WORD.findall(text) if w.strip("'")]


def stem(word: str) -> str:
    """A crude, language-agnostic stem: enough to match 'hiking' with 'hikes', and 'drive' with 'drives' and 'driving'
    (a final "e" left once the ending is off goes too: "driv", as "-es" and "-ing" leave it)."""
    base = word
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            base = word[: -len(suffix)]
            break
    if len(base) > 3 and base.endswith("e") and not base.endswith("ee"):
        base = base[:-1]
    return base[:6]


def sha256_text(text: str) -> str:
    """The SHA-256 of a text, hex (lone surrogates are hashed as they are, never an error)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
