"""Erase's own rule for "this passage states that statement": every word that carries the statement (its predicate
and objects, its names, its values) is there, and the passage does not deny it; a shared word or name is not enough.

"User likes tea" is stated by "I like tea." and "- User likes tea", not by "I dislike green tea.", "Tea time with
the team is at 4pm." or "Bought a tea kettle". A statement's marks can be kept as keyed hashes (`Marks.hashed`), so
that a tombstone can tell a passage that states an erased statement without holding its text. Pure functions."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from memory_core.text.truth import SENTENCE
from memory_core.text.words import RELATIONS

# Words that carry no statement of their own: articles, pronouns, auxiliaries, prepositions, fillers. Verbs such
# as "like", "work", "live" are NOT here: "User likes tea" and "Tea time" differ by exactly that word.
FUNCTION = frozenset("""a an the and or but so if of to in on at by for from with into onto about as than then
i me my mine myself we us our you your he him his she her it its they them their this that these those there here
user user's users assistant is are was were be been being am has have had having do does did will would shall
should can could may might must also too very really just now currently still actually some any much many new
recently lately
what which who whom whose when where why how s called named name utilisateur utilisatrice utilizador utilizadora
usuario usuária usuário usuaria nutzer nutzerin benutzer benutzerin utente gebruiker
der das dem des ein eine einen einem einer ist sind bin bist seit und oder sehr el la le les une est sont suis et du avec pour
dans sur los las una es soy está estoy del con por para os uma são sou estou da com em il lo gli è sono di della
per tiene tengo tienes tenemos tienen tem tenho temos têm habe hast haben ai avons ont ho hai abbiamo
hanno""".split())  # the other languages' articles, copulas, "have" and prepositions that are no English word
# Verbs that say little of their own ("takes insulin" is "injects insulin"): needed only where the statement has
# fewer than two other carrying words ("User takes the bus" needs "takes").
LIGHT_WORDS = "take takes took taking taken use uses used using get gets got getting".split()
# A passage that denies what the statement says does not state it (and the other way round).
NEGATIONS = frozenset("""not no never nor without don't doesn't didn't isn't aren't wasn't weren't won't can't
cannot couldn't shouldn't hasn't haven't hadn't dont doesnt didnt isnt arent wasnt werent wont cant longer
anymore""".split())
_WORD = re.compile(r"[\w']+", re.UNICODE)
_SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("edly", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", ""))


NUMBERS = {w: str(n) for n, w in enumerate("""zero one two three four five six seven eight nine ten eleven
twelve""".split())}


def root(word: str) -> str:
    """A word's crude root, so that "likes", "liked" and "liking" are one ("lik") and "dislike" is another; a
    number word is its digits ("two" is "2")."""
    word = word.casefold().strip("'")
    if word in NUMBERS:
        return NUMBERS[word]
    if word.endswith("'s"):
        word = word[:-2]
    for suffix, put in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)] + put
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word[:7]


# How often, said in two words or one: "every day" is "daily".
_EVERY = re.compile(r"\b(?:every|each|per|a)\s+(day|week|month|year)\b", re.I)
_EVERY_WORD = {"day": "daily", "week": "weekly", "month": "monthly", "year": "yearly"}


# An elided article or pronoun ("l'utilisateur", "j'habite", "dell'anno"): the word is what follows it.
_ELIDED = re.compile(r"^(?:l|j|d|qu|n|s|m|t|c|dell|nell|all|dall|sull)['’](?=\w)", re.I)


def tokens(text: str) -> list[str]:
    text = _EVERY.sub(lambda m: _EVERY_WORD[m.group(1).casefold()], text)
    return [w for w in (_ELIDED.sub("", t.strip("'")).casefold() for t in _WORD.findall(text)) if w]


def negated(text: str) -> bool:
    return any(w in NEGATIONS or w.endswith("n't") for w in tokens(text))


def _names_and_values(text: str) -> set[str]:
    """Roots of the words that name something or give a value: capitalised past a sentence's start, or with a
    digit ("Globex", "Zorbulon", "4pm", "2024")."""
    found: set[str] = set()
    raw = re.findall(r"[\w']+|[.!?]", text.strip())
    for n, token in enumerate(raw):
        start = n == 0 or raw[n - 1] in ".!?"
        word = token.strip("'")
        if not word or word in ".!?":
            continue
        if any(c.isdigit() for c in word) or word.casefold() in NUMBERS or \
                (word[:1].isupper() and not start and word.casefold() != "i"):
            if word.casefold() not in FUNCTION:
                found.add(root(word))
    return found


_POSSESSIVE = re.compile(r"(?<!\w)(\w+)['\u2019]s\b", re.UNICODE)  # from a word's start: linear in a long word


def _possessives(text: str) -> set[str]:
    """Roots of the names `text` writes as owners ("Sam's wife", "Priya’s manager")."""
    return {root(m.group(1)) for m in _POSSESSIVE.finditer(text) if m.group(1)[:1].isupper()}




def _descriptors(statement: str, names: set[str]) -> set[str]:
    """Roots of the words that only say who a name is, right before it ("daughter" of "User's daughter Lena",
    "colleague" of "my colleague Marco"): a passage that names the person need not say it again."""
    raw = re.findall(r"[\w'-]+", statement)
    return {root(raw[n - 1]) for n in range(1, len(raw))
            if root(raw[n]) in names and raw[n][:1].isupper() and raw[n - 1].casefold() in RELATIONS}


@dataclass(frozen=True)
class Marks:
    """What a passage must hold to state a statement: `must` (names and values, every one), `words` (the other
    carrying words: every one up to four, else all but a quarter) and whether the statement is a denial.
    `possessive`: the names the statement writes as owners; a passage that writes another of its names as an owner
    ("Sam's wife works as a nurse" for "User's brother Sam works as a nurse") speaks of someone else (None: not
    known, as in a tombstone written before it was kept, and not checked). `by_user`: the statement's subject is the
    user ("User owes Marta 300 euros"): a passage that opens with one of the user's people as its subject ("My sister
    ...") speaks of them; `objects`, then, its names: a passage that opens with one of them ("Marta owes me 300
    euros", "Initech fired its CEO") tells what that one did (a tombstone written before they were kept has neither:
    not checked)."""

    must: frozenset[str]
    words: frozenset[str]
    denies: bool
    possessive: frozenset[str] | None = None
    objects: frozenset[str] = frozenset()
    by_user: bool = False
    identifier: bool = False  # its values name one thing alone (a phone number, an e-mail address): they state it

    def __bool__(self) -> bool:
        return bool(self.must or self.words)

    def hashed(self, key: bytes) -> "Marks":
        """The same marks with each root a keyed hash (what a tombstone keeps instead of text)."""
        def hashed(roots: frozenset[str]) -> frozenset[str]:
            return frozenset(keyed(key, r) for r in roots)

        return Marks(hashed(self.must), hashed(self.words), self.denies,
                     None if self.possessive is None else hashed(self.possessive), hashed(self.objects), self.by_user,
                     self.identifier)

    def to_json(self) -> dict:
        out = {"must": sorted(self.must), "words": sorted(self.words), "denies": self.denies}
        if self.possessive is not None:
            out["possessive"] = sorted(self.possessive)
        out = out if not self.identifier else {**out, "identifier": True}
        return out if not self.by_user else {**out, "by_user": True, "objects": sorted(self.objects)}

    @classmethod
    def from_json(cls, value: dict) -> "Marks":
        owners = value.get("possessive")
        return cls(frozenset(value.get("must") or ()), frozenset(value.get("words") or ()), bool(value.get("denies")),
                   None if owners is None else frozenset(owners), frozenset(value.get("objects") or ()),
                   bool(value.get("by_user")), bool(value.get("identifier")))


LIGHT = frozenset(root(w) for w in LIGHT_WORDS)


def keyed(key: bytes, text: str) -> str:
    """A keyed hash (HMAC-SHA256, 32 hex digits) of a root or a normalised statement."""
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]


def marks_of(statement: str) -> Marks:
    """The marks of a statement (a fact's content)."""
    must = _names_and_values(statement)
    carrying = {root(w) for w in tokens(statement) if w not in FUNCTION and w not in NEGATIONS and len(w) > 1}
    words = carrying - must - _descriptors(statement, must)
    if len(must - NAME_NOUNS) >= 1:  # "the Green Party": "Green" names it, "I voted Green" says it
        must -= NAME_NOUNS
    if _WORKS_AS.search(statement):  # "works as a nurse" is "is a nurse"
        words -= {root("works")}
    if _AGE.search(statement):  # "User is 34 years old": "I'm 34" says it
        words -= {root("years"), root("old")}
    identifiers = {root(w) for m in _IDENTIFIER.finditer(statement) for w in tokens(m.group(0))}
    must |= {w for w in identifiers if not w.isdigit() and w not in FUNCTION}  # an address's words, all of them
    words -= must
    if len(words - LIGHT) >= 2:
        words -= LIGHT
    by_user = bool(_USER_DOES.match(statement))
    objects = {m for m in must if not any(c.isdigit() for c in m)} if by_user else set()
    return Marks(frozenset(must), frozenset(words), negated(statement), frozenset(_possessives(statement) & must),
                 frozenset(objects), by_user, bool(_IDENTIFIER.search(statement)))


# The common noun at the end of a name ("the Green Party", "St Mary's Hospital"): the name is said without it.
NAME_NOUNS = frozenset(root(w) for w in """party hospital school university college company inc ltd club church
street road avenue""".split())
_WORKS_AS = re.compile(r"\bwork(?:s|ed|ing)?\s+as\b", re.I)
_AGE = re.compile(r"\b\d{1,3}\s+years?\s+old\b", re.I)
# A value that names one thing alone: a phone or account number of seven digits or more (not a date), an e-mail address.
_IDENTIFIER = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+"
                         r"|(?<![\d])(?!\d{4}-\d\d-\d\d)\d(?:[ .-]?\d){6,}(?!\d)")


# A statement whose subject is the user alone: "User owes Marta ...", not "User's brother Sam ...".
_USER_DOES = re.compile(r"^(?:(?:the\s+)?user|(?:der|die)\s+(?:be)?nutzer(?:in)?|(?:el|la)\s+usuari[oa]|(?:o|a)\s+"
                        r"(?:usuári[oa]|utilizador[a]?)|l['’]utilisat(?:eur|rice)|l['’]utente|de\s+gebruiker)\s+(?!and\b)",
                        re.I)
# A passage that opens with someone of the user's as its subject, alone ("My sister is ...", not "My sister and I").
_BESIDE_THE_USER = r"(?!\s*(?:,\s*|and\s+|&\s*)(?:I|me|we)\b)"
_SOMEONE_OF_THEIRS = re.compile(r"^[\s\-*•>]*(?:my|our)\s+(?P<who>[\w-]+)\b(?!'s)" + _BESIDE_THE_USER, re.I)
# "daughter's friend": someone of someone of the user's
_RELATION_OF = re.compile(r"(?<![\w'])(\w+)['’]s\s+(\w+)")
# A word by which a passage speaks of the user: a statement of one carrying word needs it.
_OF_THE_USER = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|user|user's|we|our|us|ich|mich|mir|mein\w*"
                          r"|je|moi|mon|mes|yo|mis?|eu|meu|minha|meus|minhas|io|mio|mia|miei"
                          r"|tengo|soy|estoy|vivo|trabajo|tenho|sou|estou|moro|trabalho|ho|sono|lavoro)\b|\bI['’]|\bj['’]",
                          re.I)  # Spanish, Portuguese and Italian say "I" in the verb
# A passage that opens with someone other than the user as its subject.
_SOMEONE_ELSE = re.compile(r"^[\s\-*•>]*(?:someone|somebody|a (?:man|woman|guy|girl|boy|friend|neighbou?r|colleague|stranger)"
                           r"|people|everyone|everybody|nobody|the police)\b", re.I)  # not "she": a summary may mean the user
# A passage's opening name, unless the user is beside it ("Marta and I ...").
_OPENING = re.compile(r"^[\s\-*•>]*([\w'-]+)" + _BESIDE_THE_USER, re.UNICODE)


# A passage's word that says what a statement's word says ("my address is ..." says where the user lives): added to
# the passage's roots, never put in the place of a statement's (marks kept before still match as they did).
SAYS_ALSO = {root("address"): root("lives"), root("resides"): root("lives"), root("earn"): root("salary"),
             **{root(w): root("afraid") for w in "terrifies terrified scared scares fear fears frightened".split()},
             **{root(w): root("looking") for w in "hunting searching seeking".split()}, root("fan"): root("supports"),
             root("lebt"): root("wohnt"), root("wohnt"): root("lebt"),  # German's two words for "lives"
             root("therapist"): root("therapy"), root("salary"): root("earns"), root("autistic"): root("autism"),
             root("inject"): root("takes"), root("injects"): root("takes")}
# Phrases that say what a statement's word says ("Mochi passed away" says Mochi died, "I'm on sertraline" that the user
# takes it).
SAYS_ALSO_PHRASES = ((re.compile(r"\bpass(?:ed|es)? away\b", re.I), root("died")),
                     (re.compile(r"(?:\bI['’]m|\b(?:am|is|are|was|been))\s+on\b", re.I), root("takes")),
                     (re.compile(r"\b(?:out of (?:a )?work|between jobs|jobless|lost my job)\b", re.I), root("unemployed")))


def roots_of(text: str, key: bytes | None = None) -> frozenset[str]:
    found = {root(w) for w in tokens(text) if w not in FUNCTION and w not in NEGATIONS}
    found |= {SAYS_ALSO[r] for r in found if r in SAYS_ALSO}
    found |= {said for pattern, said in SAYS_ALSO_PHRASES if pattern.search(text)}
    return frozenset(keyed(key, r) for r in found) if key is not None else frozenset(found)


def states(passage: str, marks: Marks, key: bytes | None = None) -> bool:
    """Whether `passage` states the statement `marks` were made from (`key`: the marks are keyed hashes)."""
    if not marks or _denies(passage, marks, key) != marks.denies:
        return False
    held = roots_of(passage, key)
    if not marks.must <= held:
        return False
    if marks.identifier:  # "Call me on 912 345 678": the number is the statement
        return True
    if marks.possessive is not None:
        owners = {keyed(key, r) for r in _possessives(passage)} if key is not None else _possessives(passage)
        if (owners & marks.must) - marks.possessive:
            return False
    opening = _OPENING.match(passage) if marks.objects else None
    if opening and opening.group(1)[:1].isupper():
        first = root(opening.group(1).strip("'"))
        if (keyed(key, first) if key is not None else first) in marks.objects:
            return False  # the passage tells what one of the statement's others did
    theirs = _SOMEONE_OF_THEIRS.match(passage) if marks.by_user else None
    who = theirs.group("who").casefold() if theirs else ""
    if who and (who in RELATIONS or who[:-1] in RELATIONS):
        return False  # "My sister is pregnant with twins" for "User is pregnant with twins"; "My parents live in Faro"
    if marks.by_user and _SOMEONE_ELSE.match(passage) and not _OF_THE_USER.search(passage):
        return False  # "Someone was arrested outside the bar in 2019" for "User was arrested in 2019"
    for m in _RELATION_OF.finditer(passage):  # "My daughter's friend is called Emma" for "User's daughter is Emma"
        if m.group(1).casefold() in RELATIONS and m.group(2).casefold() in RELATIONS and \
                (keyed(key, root(m.group(2))) if key is not None else root(m.group(2))) not in marks.words:
            return False
    if marks.by_user and len(marks.must) + len(marks.words) == 1 and not _OF_THE_USER.search(passage):
        return False  # "The gay bar downtown closed" for "User is gay": one word alone, and no word of the user
    have = len(marks.words & held)
    need = len(marks.words) if len(marks.words) <= 4 else len(marks.words) - len(marks.words) // 4
    return have >= need and (have + len(marks.must)) > 0


# Where a sentence's clauses part: "I'm allergic to shellfish, so no shrimp for me".
_CLAUSES = re.compile(r"[,;:]\s*(?:(?:so|but|and|because|though|although|while|since)\s+)?"
                      r"|(?<!\s)\s+(?:but|so|because|although|though|while)\s+", re.I)  # a run of blanks: once


def _denies(passage: str, marks: Marks, key: bytes | None) -> bool:
    """Whether `passage` denies what it says of the statement: a denial in the clause that holds the most of the
    statement's words ("so no shrimp for me" denies nothing of "User is allergic to shellfish"), or in a clause of
    nothing but function words ("..., but not anymore")."""
    clauses = [c for c in _CLAUSES.split(passage) if c and c.strip()]
    if len(clauses) < 2:
        return negated(passage)
    wanted = marks.must | marks.words
    best = max(clauses, key=lambda c: len(roots_of(c, key) & wanted))
    return negated(best) or any(negated(c) and not roots_of(c) for c in clauses)


def related(a: str, b: str) -> bool:
    """Whether two statements say the same thing in other words, as far as words tell: either states the other,
    or they share every name and most carrying words, and agree on denial."""
    ma, mb = marks_of(a), marks_of(b)
    if states(b, ma) or states(a, mb):
        return True
    if ma.denies != mb.denies:
        return False
    wa, wb = {r[:5] for r in ma.words | ma.must}, {r[:5] for r in mb.words | mb.must}  # "allergi" ~ "allergy"
    if not ({r[:5] for r in ma.must} <= wb and {r[:5] for r in mb.must} <= wa):
        return False  # a name or value of one is missing from the other
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.5


# -- passages: the units erase plans and rewrites (a sentence of a line, or of a bullet's text) -------------------

_LEAD = re.compile(r"^(\s*(?:#+|[-*+]|\d+[.)])\s+)")
ERASED = "[erased]"


def passages(text: str) -> list[str]:
    """The sentences of `text` (a heading's or bullet's marker left out), in order."""
    out: list[str] = []
    for line in text.split("\n"):
        lead = _LEAD.match(line)
        body = line[lead.end():] if lead else line
        out += [m.group(0).strip() for m in SENTENCE.finditer(body) if m.group(0).strip()]
    return out


def passage_key(passage: str) -> str:
    """A passage's identity in an erase's plan and journal (no text): sha256 of it casefolded, space folded."""
    folded = " ".join(passage.casefold().split())
    return hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()


def rewrite(text: str, gone: Callable[[str], bool], replacement: str = ERASED) -> tuple[str, int]:
    """`text` with each passage for which `gone(passage)` holds replaced by `[erased]` (or `replacement`; lines,
    headings and bullet markers kept). Returns (new text, how many were replaced)."""
    count = 0

    def one(match: re.Match) -> str:
        nonlocal count
        sentence = match.group(0)
        body = sentence.strip()
        if not body or body == ERASED or not gone(body):
            return sentence
        count += 1
        if not replacement:
            return ""
        return sentence[:len(sentence) - len(sentence.lstrip())] + replacement + sentence[len(sentence.rstrip()):]

    out = []
    for line in text.split("\n"):
        lead = _LEAD.match(line)
        head, body = (line[:lead.end()], line[lead.end():]) if lead else ("", line)
        new = SENTENCE.sub(one, body)
        out.append(head + (" ".join(new.split()) if not replacement and new != body else new))
    return "\n".join(out), count


def by_keys(keys: Iterable[str]) -> Callable[[str], bool]:
    wanted = frozenset(keys)
    return lambda passage: passage_key(passage) in wanted
