"""Near-duplicate facts: a pair score from word overlap, embedding similarity and hard vetoes; a finder.

A pair scores `1 - WORD_WEIGHT * (1 - overlap) - EMBED_WEIGHT * (1 - cosine)`. The overlap compares the two
facts' content words (light stems, a small synonym table, numbers and names as they are): a word on one side
only ("User works at Acme as a nurse" / "User is a nurse at Acme") costs little, a word on each side that the
other lacks ("hiking" / "cooking": another value in the same place) costs a lot. At the default threshold
of 0.9 a pair needs nearly the same content words and a fair cosine: the embedding alone calls "User likes
hiking" and "User likes cooking" near-identical, and trigram or word-mean embedders miss synonyms that the
word table knows ("User is a physician" / "User is a doctor").

A veto halves the score, so a vetoed pair never reaches a threshold above 0.5: a negation on one side only,
antonyms (likes / dislikes), was / is, X over Y / Y over X, another number, date, name or person in the same
place. "User likes X" and "User does not like X" are never merged. Everything here is pure and deterministic.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

import numpy as np

from memory_core.text.words import STOPWORDS

DEFAULT_THRESHOLD = 0.9
WORD_WEIGHT = 0.5
EMBED_WEIGHT = 0.25
SUBSTITUTION_COST = 2.0
INSERTION_COST = 0.5
VETO_FACTOR = 0.5
# Candidates per fact that find_near_duplicates scores: its nearest neighbours by cosine.
NEIGHBOURS = 16

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*", re.UNICODE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_DIGITS_AND_LETTERS = re.compile(r"^(\d+)([a-z]+)$")

# Phrases that mean one word, rewritten before the words are read: "can't stand" is not a negation but "hates".
_PHRASES = [(re.compile(p), r) for p, r in (
    (r"\b(?:can't|cannot|can not) stand\b", "hates"), (r"\bwould rather\b", "prefers"),
    (r"\bwould (?:like|love)\b", "wants"), (r"\b(?:goes|go|going|went) by\b", "called"),
    (r"\b(?:gets|get|getting|got) up\b", "wakes"), (r"\bused to\b", "formerly"),
    (r"\b(?:gave|give|gives|giving) up\b", "quit"), (r"\bno longer\b", "nolonger"),
    (r"\b(?:was|were) born\b", "born"), (r"\binstead of\b", "instead"),
    (r"\b(\d+) years? old\b", r"\1"),
)]
NEGATIONS = frozenset("""not no never none nothing nobody neither nor cannot without nolonger anymore quit quits
quitting stopped formerly former""".split())
# "User was a teacher" is not "User is a teacher".
_PAST, _PRESENT = frozenset({"was", "were"}), frozenset({"is", "are", "am"})
# "X over Y": which side of the comparison a word is on matters ("tea over coffee" / "coffee over tea").
_COMPARISONS = frozenset({"over", "than", "instead", "versus", "vs"})

# Words that carry no fact of their own: function words, intensifiers, light verbs.
_LIGHT = (STOPWORDS - {"like", "more", "most", "before", "after", "one", "two"}) | _COMPARISONS | frozenset("""
big huge great really very quite pretty absolutely currently still actually generally go goes going went gone get
gets getting got take takes took taking lot lots ones being""".split())

# Each line: words that name the same thing here (the first is the group's name).
SYNONYMS = """
like likes liked liking love loves loved loving enjoy enjoys enjoyed adore adores fond fan keen prefer prefers
 preferred preference favour favours favor favors favourite favorite
dislike dislikes disliked hate hates hated detest detests loathe loathes despise
want wants wish wishes hope hopes aim aims goal goals intend intends plan plans planning planned try tries trying
 aspire aspires
learn learns learning learned learnt study studies studying studied
use uses using used utilize utilizes utilise utilises utilized rely relies
buy buys bought buying purchase purchases purchased purchasing
begin begins began beginning start starts started starting
work works working worked employ employed employs job office
live lives living lived reside resides resided based
house home
child children kid kids
mother mom mum mothers
father dad fathers
manager boss
developer engineer programmer coder
doctor physician
scared afraid frightened fear fears
bike bikes biking bicycle cycle cycles cycling
food cuisine
switch switches switching switched change changes changing changed
answer answers reply replies response responses
short concise brief
often frequently regularly
exhausting tiring draining exhausted tired
sector industry field
run runs running ran jog jogs jogging
travel travels travelling traveling trip trips visit visits visiting journey
name named called call
wake wakes waking woke riser rise rises
partner wife husband spouse married marry girlfriend boyfriend fiance fiancee
car drive drives driving drove
"""
# A pair of groups that say opposite things: one side has a word of the first, the other one of the second.
ANTONYMS = """
like | dislike avoid avoids
remember remembers | forget forgets forgot
trust trusts | distrust distrusts mistrust
agree agrees | disagree disagrees
accept accepts | reject rejects refuse refuses decline declines
allow allows permit permits | forbid forbids ban bans prohibit prohibits
include includes | exclude excludes
increase increases | decrease decreases reduce reduces
always | never
more | less fewer
early earlier | late later
before | after
light | dark
hot warm | cold cool
big large | small little
long longer | short shorter
fast faster quick | slow slower
cheap | expensive
old older | young younger
easy easier | hard harder difficult
good better best great | bad worse worst
win wins | lose loses
pass passes | fail fails
buy | sell sells
"""
# People and animals a fact can be about besides the user: a fact about the user's sister is not about the user.
PEOPLE = frozenset("""partner child mother father manager sister sisters brother brothers sibling siblings parent
parents son sons daughter daughters baby grandmother grandma grandfather grandpa grandparents aunt uncle cousin
niece nephew friend friends colleague colleagues coworker coworkers teammate teammates neighbour neighbor roommate
flatmate team dog dogs cat cats pet pets family""".split())
NUMBER_WORDS = {w: str(i) for i, w in enumerate("""zero one two three four five six seven eight nine ten eleven
twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty""".split())}
NUMBER_WORDS |= {w: str(20 + 10 * i) for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 1)}
NUMBER_WORDS |= {"hundred": "100", "thousand": "1000", "dozen": "12", "once": "1x", "twice": "2x"}
# Words that are a date or a time of day: a value, like a number ("on Mondays" / "on Fridays").
DATES = frozenset("""january february march april june july august september october november december monday tuesday
wednesday thursday friday saturday sunday weekday weekend spring summer autumn winter morning afternoon evening
night noon midnight""".split())


def _root(word: str) -> str:
    """A light stem: 'hiking', 'hikes' and 'hike' -> 'hik'; 'studies' -> 'stud'; 'mornings' -> 'morn'."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("es") and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 4 and w.endswith("ied"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w[-1] in "ey":
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


def _groups(table: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in table.strip().replace("\n ", " ").splitlines():
        names = line.split()
        for name in names:
            out.setdefault(_root(name), _root(names[0]))
    return out


_SYNONYM = _groups(SYNONYMS)
_PEOPLE = frozenset(_SYNONYM.get(_root(w), _root(w)) for w in PEOPLE)
_DATES = frozenset(_root(w) for w in DATES)


def _canonical(word: str) -> str:
    root = _root(word)
    return _SYNONYM.get(root, root)


def _antonym_sides() -> list[tuple[frozenset[str], frozenset[str]]]:
    pairs = []
    for line in ANTONYMS.strip().splitlines():
        left, right = line.split("|")
        pairs.append((frozenset(_canonical(w) for w in left.split()), frozenset(_canonical(w) for w in right.split())))
    return pairs


_ANTONYMS = _antonym_sides()


@dataclass(frozen=True)
class _Analysis:
    """What the score needs of one text, computed once per text."""

    key: str  # casefolded words in order: equal keys differ only in casing, punctuation and spacing
    content: frozenset[str]  # canonical content words, numbers and names included
    poles: frozenset[tuple[int, int]]  # (antonym pair, side) for each pair the text takes one side of
    negated: bool
    tense: str  # "past", "present" or "" (neither or both)
    comparison: tuple[str, str] | None  # the content words either side of "over", "than", "prefers X to Y"
    numbers: frozenset[str]
    capitalised: frozenset[str]  # words written with a capital letter past the first word (names, places)
    people: frozenset[str]


def _tokens(text: str) -> tuple[list[str], list[str]]:
    """The casefolded words of `text` and the same words as written, possessive 's dropped, '6am' -> '6', 'am'."""
    lowered, written = [], []
    for raw in _TOKEN.findall(_THOUSANDS.sub("", text.replace("\u2019", "'"))):
        if raw.casefold().endswith("'s"):
            raw = raw[:-2]
        match = _DIGITS_AND_LETTERS.match(raw.casefold())
        parts = [match.group(1), match.group(2)] if match else [raw]
        for part in parts:
            lowered.append(part.casefold())
            written.append(part)
    return lowered, written


def _comparison(words: list[str], canonical: list[str]) -> tuple[str, str] | None:
    """The content words either side of the first "over" / "than" / "instead of" (or "to" after "prefer")."""
    for i, w in enumerate(words):
        if w in _COMPARISONS or (w == "to" and any(x.startswith("prefer") for x in words[:i])):
            before = [c for x, c in zip(words[:i], canonical[:i]) if x not in _LIGHT]
            after = [c for x, c in zip(words[i + 1:], canonical[i + 1:]) if x not in _LIGHT]
            if before and after:
                return before[-1], after[0]
    return None


@functools.lru_cache(maxsize=65536)
def _analyse(text: str) -> _Analysis:
    lowered, written = _tokens(text)
    phrased = " ".join(lowered)
    for pattern, replacement in _PHRASES:
        phrased = pattern.sub(replacement, phrased)
    words = phrased.split()
    negated = any(w in NEGATIONS or w.endswith("n't") for w in words)
    past, present = bool(_PAST.intersection(words)), bool(_PRESENT.intersection(words))
    numbers = {NUMBER_WORDS.get(w, w) for w in words if w.isdigit() or w in NUMBER_WORDS}
    for i, w in enumerate(words):
        # "may" is a month only next to a number ("May 3"), else the verb.
        if _root(w) in _DATES or (w == "may" and any(n.isdigit() for n in words[max(0, i - 1):i + 2])):
            numbers.add(_root(w))
    capitalised = {_canonical(w.casefold()) for i, w in enumerate(written)
                   if i and any(c.isupper() for c in w) and w.casefold() not in _LIGHT and w.casefold() != "user"}
    canonical = [NUMBER_WORDS[w] if w in NUMBER_WORDS else _canonical(w) for w in words]
    content = frozenset(c for w, c in zip(words, canonical)
                        if w not in _LIGHT and w not in NEGATIONS and not w.endswith("n't"))
    return _Analysis(
        key=" ".join(lowered), content=content, poles=_poles(frozenset(canonical)), negated=negated,
        tense="past" if past and not present else "present" if present and not past else "",
        comparison=_comparison(words, canonical), numbers=frozenset(numbers), capitalised=frozenset(capitalised),
        people=frozenset(c for c in canonical if c in _PEOPLE))


def _poles(words: frozenset[str]) -> frozenset[tuple[int, int]]:
    """(pair, side) for each ANTONYMS pair that `words` (function words included) take exactly one side of."""
    poles = set()
    for pair, (left, right) in enumerate(_ANTONYMS):
        if words & left and not words & right:
            poles.add((pair, 0))
        elif words & right and not words & left:
            poles.add((pair, 1))
    return frozenset(poles)


def _veto(a: _Analysis, b: _Analysis) -> str | None:
    if a.negated != b.negated:
        return "negation"
    if any((pair, 1 - side) in b.poles for pair, side in a.poles):
        return "antonym"
    if a.tense and b.tense and a.tense != b.tense:
        return "tense"
    if a.comparison and b.comparison and (a.comparison[0] == b.comparison[1] or a.comparison[1] == b.comparison[0]):
        return "order"
    if a.numbers - b.numbers and b.numbers - a.numbers:
        return "number"
    # A name counts on both sides when either writes it with a capital ("user lives in berlin" / "... Berlin").
    names = a.capitalised | b.capitalised
    a_names, b_names = a.content & names, b.content & names
    if a_names - b_names and b_names - a_names:
        return "name"
    if a.people != b.people:
        return "person"
    return None


def veto_reason(a: str, b: str) -> str | None:
    """Why facts `a` and `b` must never be merged, or None: "negation" (one side only), "antonym" (likes /
    dislikes), "tense" (was / is), "order" (X over Y / Y over X), "number" (another number, date or time),
    "name" (another capitalised name in its place), "person" (about someone else: "User's sister ...")."""
    return _veto(_analyse(a), _analyse(b))


def _same_root(x: str, y: str) -> bool:
    """'allergic' / 'allerg', 'founder' / 'found': a shared start of 5 letters or more, most of the shorter word."""
    if x.isdigit() or y.isdigit():
        return False
    shared = len(os.path.commonprefix((x, y)))
    return shared >= 5 and shared >= 0.75 * min(len(x), len(y))


def _alignment(a: _Analysis, b: _Analysis) -> tuple[int, int, int]:
    """(matched, substituted, inserted) content words: a word on one side only is an insertion, a word on each
    side that the other lacks is a substitution ("hiking" / "cooking": another value in the same place)."""
    left, right = sorted(a.content - b.content), sorted(b.content - a.content)
    matched = len(a.content & b.content)
    for x in list(left):
        y = next((y for y in right if _same_root(x, y)), None)
        if y is not None:
            left.remove(x)
            right.remove(y)
            matched += 1
    return matched, min(len(left), len(right)), abs(len(left) - len(right))


def _overlap(a: _Analysis, b: _Analysis) -> float:
    """Matched content words against what differs, a substitution costing SUBSTITUTION_COST matched words."""
    matched, substituted, inserted = _alignment(a, b)
    total = matched + SUBSTITUTION_COST * substituted + INSERTION_COST * inserted
    return matched / total if total else float(a.key == b.key)


def _score(a: _Analysis, b: _Analysis, cosine: float) -> float:
    if b.key < a.key:  # the word alignment is greedy: always align in the same order, so the score is symmetric
        a, b = b, a
    if a.key == b.key:
        score = 1.0
    else:
        cosine = min(max(cosine, 0.0), 1.0)
        score = max(0.0, 1.0 - WORD_WEIGHT * (1.0 - _overlap(a, b)) - EMBED_WEIGHT * (1.0 - cosine))
    return score * VETO_FACTOR if _veto(a, b) else score


def pair_score(a: str, b: str, va: np.ndarray, vb: np.ndarray) -> float:
    """How much facts `a` and `b` (with unit-length embeddings `va`, `vb`) say the same thing: 0..1, symmetric.

    Texts equal up to casing, punctuation and spacing score 1; a vetoed pair at most 0.5."""
    return _score(_analyse(a), _analyse(b), float(np.dot(va, vb)))


def _min_cosine(threshold: float) -> float:
    """Below this cosine no pair reaches `threshold`, whatever its words (less a hair for float32 rounding)."""
    return 1.0 - (1.0 - threshold) / EMBED_WEIGHT - 1e-5


def _candidates(vectors: np.ndarray, floor: float, k: int) -> set[tuple[int, int]]:
    """Pairs (i < j) where j is among i's k nearest rows (or i among j's) with a cosine of at least `floor`."""
    n = vectors.shape[0]
    k = min(k, n - 1)
    pairs: set[tuple[int, int]] = set()
    if k <= 0:
        return pairs
    block = max(1, (1 << 22) // n)  # about 16 MB of float32 similarities at a time
    for start in range(0, n, block):
        sims = vectors[start:start + block] @ vectors.T
        rows = np.arange(sims.shape[0])
        sims[rows, start + rows] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        keep = sims[rows[:, None], top] >= floor
        for row, col in zip(*np.nonzero(keep)):
            i, j = start + int(row), int(top[row, col])
            pairs.add((i, j) if i < j else (j, i))
    return pairs


def find_near_duplicates(texts: list[str], vectors: np.ndarray, threshold: float = DEFAULT_THRESHOLD,
                         *, limit: int | None = None) -> list[tuple[int, int, float]]:
    """Pairs `(i, j, score)` of `texts` (i < j) scoring at least `threshold`, best first.

    `vectors` holds one unit-length row per text. Only each text's NEIGHBOURS nearest rows by cosine are
    scored, and texts with the same content words, so a text with more close neighbours than that may miss
    a pair; on anything smaller it finds exactly what scoring every pair would."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ValueError(f"vectors must have one row per text: {len(texts)} texts, shape {vectors.shape}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be within 0..1; got {threshold!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None; got {limit!r}")
    analyses = [_analyse(t) for t in texts]
    pairs = _candidates(vectors, _min_cosine(threshold), NEIGHBOURS)
    # In a dense cluster ("User's sister is 34", "... is 35", ...) the nearest rows can crowd out a rewording
    # ("User's sister is 34 years old"): texts with the same content words are candidates too.
    groups: dict[object, list[int]] = {}
    for i, analysis in enumerate(analyses):
        groups.setdefault(analysis.content or analysis.key, []).append(i)
    pairs.update((i, j) for same in groups.values() for x, i in enumerate(same) for j in same[x + 1:])
    found = []
    for i, j in pairs:
        score = _score(analyses[i], analyses[j], float(np.dot(vectors[i], vectors[j])))
        if score >= threshold:
            found.append((i, j, score))
    found.sort(key=lambda p: (-p[2], p[0], p[1]))
    return found if limit is None else found[:limit]
