"""One truth: which sentences of a text state a fact that is no longer true, and the text without them.

Memory keeps what it knows in several copies (facts, the summaries, MEMORY.md, daily logs, the search index).
When a fact is retired (invalidated, superseded, deleted, merged away), the copies an agent reads as current must
stop stating it. A sentence (or a MEMORY.md bullet) states a fact when it holds the fact's distinctive words:
its content words less the verbs every statement about the user shares ("works", "lives", "likes", ...) and less
the words its replacement also says ("User works at Acme" -> "User works at Globex": only "acme" is distinctive).
Numbers, dates, names and negation are part of the statement (`Marks`): "User has 3 kids" does not state "User has
2 kids" (a number is read next to the word it counts: "2 kids", "floor 4", "March 3"), "User plays tennis with
João" does not state "... with Maria", and "User no longer likes jazz" does not state "User likes jazz".
Where memory_core wrote a sentence itself from facts, it stored the sentence's provenance (`Provenance`, keyed by
`sentence_key`): that is read first and is exact; the distinctive words are the fallback for text without it (written
by hand, LLM prose). Pure functions; `memory_core.consistency.propagation` applies them to the stored copies."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

from memory_core.text.words import NUMBER_WORDS, RELATIONS, STOPWORDS, stem, words

# Verbs and fillers that statements about the user share: never distinctive on their own.
GENERIC = frozenset("""user user's users is are was were be been has have had works work worked working lives live
lived living likes like liked loves love prefers prefer preferred enjoys enjoy uses use used wants want needs need
currently now still no longer anymore actually called named name based as at in on of for to from with the a an
""".split())
ERASED = "[erased]"

# A sentence: from a character to the first run of . ! ? before a blank, or to the line's end; a run inside a word
# ("127.0.0.1", "md.png", "e.g.") goes on. Written so that no start is tried twice (a lazy body was cubic on dots).
SENTENCE = re.compile(r"[^\s](?:[^\n.!?]|[.!?]+(?=[^\s.!?]))*(?:[.!?]+(?=\s)|[.!?]*$)", re.M)
_BULLET = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)(.*)$")


@dataclass(frozen=True)
class Retired:
    """A fact that stopped being true: its text, and the text of the fact that replaced it (if any)."""

    fact_id: str
    content: str
    replacement: str | None = None
    replacement_id: str | None = None  # the fact whose text `replacement` is (the same fact for an edit)


@dataclass(frozen=True)
class Provenance:
    """What memory_core wrote a sentence (or a MEMORY.md bullet) from: stored facts, and for a dream's bullets the
    daily logs it read them in ("log:YYYY-MM-DD"). Many facts may stand behind one sentence."""

    fact_ids: frozenset[str] = frozenset()
    logs: frozenset[str] = frozenset()

    def __or__(self, other: "Provenance") -> "Provenance":
        return Provenance(self.fact_ids | other.fact_ids, self.logs | other.logs)


Sources = Mapping[str, Provenance]  # sentence_key(sentence) -> what it was written from


def sentence_key(text: str) -> str:
    """A sentence's identity in the provenance: the sha256 of its text casefolded, white space folded and its end
    punctuation left out ("User works at Acme." in a summary and "User works at Acme" as a bullet are one)."""
    folded = " ".join(text.casefold().split()).rstrip(".!?…").rstrip()
    return hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()


_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def _token(word: str) -> str:
    """A word as the matcher compares it: numbers as digits ("two", "02" and "2nd" are "2"), others as they are."""
    word = NUMBER_WORDS.get(word, word)
    ordinal = _ORDINAL.match(word)
    if ordinal:
        word = ordinal.group(1)
    return str(int(word)) if word.isdigit() and len(word) < 10 else word


def _tokens(text: str) -> list[str]:
    return [stem(_token(w)) for w in words(text)]


@lru_cache(maxsize=4096)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_tokens(text))


def stems(text: str) -> frozenset[str]:
    return _stems(text)


def content_stems(text: str) -> set[str]:
    """The stems of a text's words that carry meaning (no stop words, no 'user')."""
    return {stem(_token(w)) for w in words(text) if w not in STOPWORDS and w not in GENERIC and len(w) > 1}


class Marks(frozenset):
    """The distinctive stems of a fact (the set itself) and what else a sentence must agree on to state it: the
    `exact` stems it must hold all of (the fact's numbers, names and months), `anchors` of which it must hold one
    (what a number counts, where the number is all that is distinctive), each number's `bound` neighbours (a
    sentence must say the number next to one of them) and whether the fact is `negated`."""

    exact: frozenset[str]
    anchors: frozenset[str]
    bound: tuple[tuple[str, frozenset[str]], ...]
    negated: bool

    def __new__(cls, stems: Iterable[str], exact: Iterable[str] = (), anchors: Iterable[str] = (),
                bound: tuple[tuple[str, frozenset[str]], ...] = (), negated: bool = False) -> "Marks":
        marks = super().__new__(cls, stems)
        marks.exact, marks.anchors, marks.bound, marks.negated = frozenset(exact), frozenset(anchors), bound, negated
        return marks


# "not", "never", "no longer", "doesn't", "stopped", "used to", "switched from", "replaced", "was ... until": the clause
# says it is not so (now).
_NEGATION = re.compile(r"\b(?:not|no|never|nor|no\s+longer|no\s+more|any\s*more|any\s+longer|stopped|quit|quits"
                       r"|gave\s+up|gave\s+away|used\s+to|formerly|instead\s+of|rather\s+than|replaced|swapped|ditched"
                       r"|sold|(?:switched|moved|changed|went)\s+(?:away\s+)?from|(?:was|were)\b.*\buntil)\b|n't\b",
                       re.I)
# Where a sentence's clauses part: punctuation, or before "but", "instead of", ... (which open the next clause).
_CLAUSES = re.compile(r"[;,:()]|\s[-–—]+\s|(?=\s(?:but|while|whereas|although|though|yet|however|instead\s+of"
                      r"|rather\s+than|except|unlike)\s)|(?=\s(?:and|so)\s+(?:still|yet|i|we|he|she|they|i['’]m|i['’]ve)\b)",
                      re.I)  # "I'm 29 and still can't cook": the negation is the second clause's
_NEAR = 2  # how many words apart a number and what it counts may stand in a sentence ("two young kids")
_UNBOUND = frozenset({"a", "an", "the", "user", "user'"})


def negated(text: str, about: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether `text` says that something is not (or no longer) so: in the clauses that hold a stem of `about`
    when given (and some do), else anywhere ("User likes ramen but not sushi" is negated about sushi only)."""
    clauses = [c for c in _CLAUSES.split(text) if c and c.strip()]
    holding = [c for c in clauses if about & stems(c)] if about else []
    return any(_NEGATION.search(c) for c in (holding or clauses))


def _numbers(content: str) -> list[tuple[str, frozenset[str]]]:
    """Each number of a fact with the stems next to it (what it counts or orders: "2 kids", "floor 4")."""
    tokens = _tokens(content)
    return [(t, frozenset(tokens[j] for j in (i - 1, i + 1) if 0 <= j < len(tokens)) - _UNBOUND)
            for i, t in enumerate(tokens) if t.isdigit()]


def _bound(text: str, bound: tuple[tuple[str, frozenset[str]], ...]) -> bool:
    """Whether `text` says each number next to (within _NEAR words of) one of the stems it stood beside."""
    tokens = _tokens(text)
    for number, near in bound:
        if not near:
            continue
        if "is" in near:  # "User is 29": "I'm 29", "I am 29"
            near = near | {"i'm", "i’m", "am"}
        if not any(t == number and near & set(tokens[max(0, i - _NEAR):i] + tokens[i + 1:i + 1 + _NEAR])
                   for i, t in enumerate(tokens)):
            return False
    return True


@lru_cache(maxsize=4096)
def _exact(content: str) -> frozenset[str]:
    """The stems a sentence must hold all of to state `content`: its numbers, its names, its months and days."""
    names = {stem(_token(w)) for name in proper_names(content) for w in name.split()}
    found = {t for t in _tokens(content) if t.isdigit()} | names
    return frozenset(found | {stem(w) for w in words(content) if w in _CALENDAR})


@lru_cache(maxsize=4096)
def distinctive(content: str, replacement: str | None = None) -> frozenset[str]:
    """What a sentence must hold to state `content` (a `Marks`): its meaningful stems and numbers less those its
    replacement shares, unless the replacement says the opposite ("User no longer likes jazz" leaves "jazz")."""
    numbers = _numbers(content)
    own = frozenset(content_stems(content)) | {n for n, _near in numbers}
    is_negated = negated(content)
    found = own
    if replacement and negated(replacement) == is_negated:
        found = own - stems(replacement)
    anchors = own - found if found and all(m.isdigit() for m in found) else frozenset()
    return Marks(found, _exact(content) & found, anchors, tuple(numbers), is_negated)


def _agrees(text: str, marks: Marks, held: frozenset[str]) -> bool:
    return marks.exact <= held and (not marks.anchors or bool(marks.anchors & held)) \
        and _bound(text, marks.bound) and negated(text, marks | marks.exact) == marks.negated


def states(text: str, marks: frozenset[str] | set[str]) -> bool:
    """Whether `text` holds the distinctive stems `marks`: all of them when there are up to three, else three
    in four (a sentence rarely repeats a long fact word for word); for a fact's `Marks`, agreeing on its numbers,
    names and negation too."""
    if not marks:
        return False
    held_stems = stems(text)
    held = len(marks & held_stems)
    if not (held == len(marks) if len(marks) <= 3 else held >= max(3, round(0.75 * len(marks)))):
        return False
    return _agrees(text, marks, held_stems) if isinstance(marks, Marks) else True


@lru_cache(maxsize=4096)
def full_stems(content: str) -> frozenset[str]:
    """Every meaningful stem of a fact, its verb and numbers included (what makes two statements the same
    statement)."""
    return frozenset(stem(_token(w)) for w in words(content)
                     if (w not in STOPWORDS or _token(w).isdigit()) and w not in {"user", "user's", "users"})


@lru_cache(maxsize=4096)
def _full_marks(content: str) -> Marks:
    return Marks(full_stems(content), _exact(content), (), tuple(_numbers(content)), negated(content))


def says_same(text: str, content: str) -> bool:
    """Whether `text` says all that `content` says (every meaningful stem of it, its numbers where they stood, and
    negated alike)."""
    marks = _full_marks(content)
    held = stems(text)
    return bool(marks) and marks <= held and _agrees(text, marks, held)


def says_retired(text: str, old: Retired, *, said: bool = False) -> bool:
    """What `truth.stale` leaves to the words it judges by, for a passage quoted as it was said: one that says all
    the retired fact says ("I love tea." for "User loves tea", since replaced by "User no longer likes tea", which
    shares its one distinctive word), or, for a fact retired with no replacement, all its distinctive words but one
    spelt otherwise ("favourite" for "favorite"). `said`: see `stale`."""
    teller = _teller(text)
    if (said and not teller.of_user) or not teller.may_tell(old.content):
        return False
    if says_same(text, old.content):
        return True
    marks = distinctive(old.content, old.replacement)
    return old.replacement is None and len(marks) >= 2 and len(marks & stems(text)) >= len(marks) - 1


# A turn's word that says what a fact's predicate says ("my flat in Madrid": where the user lives; "my team at Spotify":
# where they work), British spellings beside American ones; read only for turns (`said`).
_PREDICATE_WORDS = {"live": "flat apartment house home moved rent neighbourhood neighborhood",
                    "work": "job team office boss colleague colleagues company employer shift hired joined",
                    "favorite": "favourite love best", "color": "colour", "doctor": "gp physician",
                    "learn": "practising practicing practise practice study studying lesson lessons class course",
                    "commute": "take ride", "allergic": "sneeze sneezing itchy hives reaction"}
_SAYS_PREDICATE = {stem(_token(w)): stem(_token(p)) for p, ws in _PREDICATE_WORDS.items() for w in ws.split()}
_WORKS_AS_JOB = re.compile(r"\bworks? as an? ([\w-]+(?: [\w-]+)?)\s*$", re.I)
_AGE = r"(?:\bi['’]m|\bi am|\bturn(?:ed|s|ing)?|\baged?)\s+{n}\b|\b{n}[ -]years?[ -]old\b"


def _predicated(sentence: str, old: Retired, marks: frozenset[str]) -> bool:
    """Whether a turn that names a retired fact's value says it of the user as the fact does: with its predicate ("I
    live in Madrid", not "I loved the food in Madrid" for "User lives in Madrid") or a word that says it ("my flat in
    Madrid"), or owning the value ("My Vespa broke down" for "User owns a Vespa"); a fact of the value alone ("User is
    vegetarian") needs none, and an age ("User is 29") is said as one ("I'm 29", not "I ran 29 km")."""
    predicate = full_stems(old.content) - marks
    job = _WORKS_AS_JOB.search(old.content)
    if job:  # "User works as a nurse": "I'm a nurse" says it
        return bool(re.search(rf"\b(?:i['’]m|i am|as|work(?:s|ed|ing)? as)\s+(?:an?\s+)?{re.escape(job.group(1))}\b",
                              sentence, re.I))
    if all(p.isdigit() for p in predicate):
        numbers = [m for m in marks if m.isdigit()]
        return not numbers or bool(re.search(_AGE.format(n=numbers[0]), sentence, re.I)) \
            or not full_stems(old.content) <= set(numbers)
    held = stems(sentence)
    held |= {_SAYS_PREDICATE[h] for h in held if h in _SAYS_PREDICATE}
    if any(h.startswith(p) or p.startswith(h) for p in predicate for h in held if min(len(p), len(h)) >= 3):
        return True  # "lived", "living" for "liv"
    tokens = _tokens(sentence)  # "my" owns the word after it, or the one after that ("My Honda Civic")
    return any(t == "my" and not marks.isdisjoint(tokens[n + 1:n + 3]) for n, t in enumerate(tokens))


def stale(sentence: str, retired: Sequence[Retired], valid: Sequence[str], *, said: bool = False) -> Retired | None:
    """The retired fact that `sentence` states, unless a valid fact says what the sentence says of it. A sentence that
    opens with someone of the user's ("My sister lives in Madrid") tells of them, not of the user, unless the fact
    names them too; `said` (a turn of a conversation, as it was said): one that names no one of the user's side
    ("Madrid is hot in summer", "Alice from accounting sent it") states nothing of the user either."""
    teller = _teller(sentence)  # read once, whatever the number of retired facts
    if said and not teller.of_user:
        return None
    for old in retired:
        marks = distinctive(old.content, old.replacement)
        if not teller.may_tell(old.content) or not states(sentence, marks) \
                or (said and not _predicated(sentence, old, marks)):
            continue
        if says_same(sentence, old.content) or not any(says_same(sentence, v) for v in valid):
            if not any(says_same(v, old.content) for v in valid):
                return old
    return None


# A turn's speaker ("Caroline: "), a sentence's opening person of the user's ("My sister", "User's dad"), and a word of
# the user's side of a conversation.
_SPEAKER = re.compile(r"^[^:\n]{1,64}:\s+")
_THEIRS = re.compile(r"^[\s\-*•>]*(?:my|our|their|(?:the\s+)?user['’]s)\s+(?P<who>[\w-]+)", re.I)
_OF_THE_USER = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|our|ours|us|user|user's|they|their|them)\b"
                          r"|\bI['’]", re.I)


@dataclass(frozen=True)
class _Teller:
    """Of whom a text tells: `who`, the person of the user's it opens with ("sister" of "My sister lives in Madrid"),
    if any; `of_user`, whether it names anyone on the user's side (I, we, the user, they)."""

    who: str | None
    of_user: bool

    def may_tell(self, content: str) -> bool:
        """Whether the text may tell of what `content` (a fact) tells of: not of someone else of the user's."""
        return self.who is None or re.search(rf"(?<!\w){re.escape(self.who)}(?!\w)", content, re.I) is not None


def _teller(text: str) -> _Teller:
    words_said = _SPEAKER.sub("", text, count=1)
    theirs = _THEIRS.match(words_said)
    who = theirs.group("who") if theirs and theirs.group("who").casefold() in RELATIONS else None
    return _Teller(who, _OF_THE_USER.search(words_said) is not None)


def judge(sentence: str, retired: Sequence[Retired], valid: Sequence[str], sources: Sources | None = None,
          valid_ids: Iterable[str] | None = None) -> tuple[Retired | None, str | None]:
    """The retired fact `sentence` states, and how that was found. Its stored provenance first: a sentence written
    from a retired fact states it ("provenance"), unless a valid fact says the same; one written from facts alone,
    one of them still valid (by `valid_ids`, when given) and none retired, states nothing retired. Otherwise
    (no provenance, daily-log sources, which may hold anything, or only facts gone since) the distinctive words
    decide ("words")."""
    known = sources.get(sentence_key(sentence)) if sources else None
    if known is not None and known.fact_ids:
        for old in retired:
            if old.fact_id in known.fact_ids and not any(says_same(v, old.content) for v in valid):
                return old, "provenance"
        current = known.fact_ids if valid_ids is None else known.fact_ids.intersection(valid_ids)
        if current and not known.logs:
            return None, None
    old = stale(sentence, retired, valid)
    return old, ("words" if old is not None else None)


def may_state(text: str, retired: Sequence[Retired], sources: Sources | None = None) -> bool:
    """Whether some sentence of `text` could be found to state a retired fact (`judge`): its provenance names one, or
    it holds one's distinctive words. Where not, no valid fact can change that (valid facts only keep a sentence)."""
    ids = {old.fact_id for old in retired}
    marks = [distinctive(old.content, old.replacement) for old in retired]
    for sentence in split_sentences(text):
        known = sources.get(sentence_key(sentence)) if sources else None
        if (known is not None and ids & known.fact_ids) or any(states(sentence, m) and _teller(sentence).may_tell(old.content)
                                                               for old, m in zip(retired, marks)):
            return True
    return False


def split_sentences(text: str) -> list[str]:
    return [m.group(0).strip() for m in SENTENCE.finditer(text) if m.group(0).strip()]


Rewrite = Callable[[str, Retired], "str | None"]


def _replace(sentence: str, old: Retired, retired: Sequence[Retired], rewrite: Rewrite | None,
             punctuate: bool = True) -> str | None:
    """What stands for a stale sentence: a guarded rewrite, else the replacement fact's text, else nothing."""
    if rewrite is not None:
        try:
            new = rewrite(sentence, old)
        except Exception:  # noqa: BLE001 - a failed rewrite drops the sentence instead
            new = None
        if new and "\n" not in new.strip() and len(new) <= 2 * len(sentence) + 200 \
                and not any(states(new, distinctive(r.content, r.replacement)) for r in retired):
            return new.strip()
    if old.replacement:
        text = old.replacement.strip()
        return text if not punctuate or text[-1:] in ".!?" else text + "."
    return None


def scrub_prose(text: str, retired: Sequence[Retired], valid: Sequence[str], rewrite: Rewrite | None = None,
                sources: Sources | None = None, valid_ids: Iterable[str] | None = None) -> tuple[str, list[str]]:
    """`text` (a summary) without the sentences that state a retired fact (by their `sources` first, see
    `judge`); returns (new text, dropped)."""
    out: list[str] = []
    dropped: list[str] = []
    sentences = split_sentences(text)
    for n, sentence in enumerate(sentences):
        old, _how = judge(sentence, retired, valid, sources, valid_ids)
        if old is None:
            out.append(sentence)
            continue
        dropped.append(sentence)
        new = _replace(sentence, old, retired, rewrite)
        if new and not any(says_same(s, new) for s in out + sentences[n + 1:]):  # said already, before or after
            out.append(new)
    return " ".join(out), dropped


def scrub_markdown(markdown: str, retired: Sequence[Retired], valid: Sequence[str], rewrite: Rewrite | None = None,
                   sources: Sources | None = None, valid_ids: Iterable[str] | None = None) -> tuple[str, list[str]]:
    """MEMORY.md without the bullets (and the sentences of other lines) that state a retired fact; a superseded
    fact's bullet becomes its replacement's. Returns (new text, what was dropped)."""
    lines: list[str] = []
    dropped: list[str] = []
    source = markdown.split("\n")
    for n, line in enumerate(source):
        if not line.strip() or line.lstrip().startswith("#"):
            lines.append(line)
            continue
        bullet = _BULLET.match(line)
        lead, body = (bullet.group(1), bullet.group(2)) if bullet else ("", line)
        old, _how = judge(body, retired, valid, sources, valid_ids)
        if old is None:
            lines.append(line)
            continue
        if bullet:
            dropped.append(body)
            new = _replace(body, old, retired, rewrite, punctuate=False)
            if new and not any(says_same(existing, new) for existing in lines + source[n + 1:]):
                lines.append(lead + new)
            continue
        kept, gone = scrub_prose(line, retired, valid, rewrite, sources, valid_ids)
        dropped += gone
        if kept:
            lines.append(kept)
    return "\n".join(lines), dropped


def erase_passages(text: str, marks: frozenset[str] | set[str], names: frozenset[str] = frozenset()) -> tuple[str, int]:
    """`text` with every sentence that holds `marks` (or names one of `names`) replaced by `[erased]`, line
    structure and Markdown headers kept. Returns (new text, how many passages were erased)."""
    if not marks and not names:
        return text, 0
    count = 0

    def hit(sentence: str) -> bool:
        return states(sentence, marks) or bool(names and _names_in(sentence, names))

    def one(match: re.Match) -> str:
        nonlocal count
        sentence = match.group(0)
        if not hit(sentence):
            return sentence
        count += 1
        lead = sentence[:len(sentence) - len(sentence.lstrip())]
        return lead + ERASED + sentence[len(sentence.rstrip()):]

    out = []
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        if bullet:
            out.append(bullet.group(1) + SENTENCE.sub(one, bullet.group(2)))
        elif line.lstrip().startswith("#"):
            heading = re.match(r"^(\s*#+\s*)(.*)$", line)
            out.append(heading.group(1) + ERASED if heading and hit(heading.group(2)) and (count := count + 1)
                       else line)
        else:
            out.append(SENTENCE.sub(one, line))
    return "\n".join(out), count


def erase_marks(content: str) -> frozenset[str]:
    """The stems whose presence marks a passage stating `content` for erasure (its distinctive words)."""
    return frozenset(content_stems(content) or full_stems(content))


_CALENDAR = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())


def proper_names(content: str) -> frozenset[str]:
    """The names in `content` (runs of capitalised words past its first word), casefolded and joined by spaces:
    a passage naming one of them is about what is erased, whatever else it says ("Globex", "new york city")."""
    names = set()
    tokens = re.findall(r"[\w'-]+|[.!?]", content.strip())
    run: list[str] = []
    for n, token in enumerate(tokens + ["."]):
        sentence_start = n == 0 or tokens[n - 1] in ".!?"
        if token[:1].isupper() and not sentence_start and token.casefold() not in STOPWORDS | GENERIC | {"i"}:
            run.append(token.casefold())
            continue
        if run and not (len(run) == 1 and (run[0] in _CALENDAR or len(run[0]) < 3)):
            names.add(" ".join(run))
        run = []
    return frozenset(names)


def _names_in(sentence: str, names: frozenset[str]) -> bool:
    padded = " " + " ".join(words(sentence)) + " "
    return any(f" {name} " in padded for name in names)


def sentences_of(text: str) -> list[str]:
    """The units a text's provenance is kept for: each bullet's text whole, each sentence of other lines (headings
    left out)."""
    out: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith("#"):
            continue
        bullet = _BULLET.match(line)
        out += [bullet.group(2).strip()] if bullet else split_sentences(line)
    return [s for s in out if s]


def ties(text: str, facts: Mapping[str, str]) -> dict[str, Provenance]:
    """The provenance that can be told exactly for `text`: each of its sentences (bullets) that is a fact's text
    (or a sentence of it), with the facts ({id: content}) it is. Anything else stays without provenance."""
    return tie_all({"": text}, facts)[""]


def tie_all(texts: Mapping[str, str], facts: Mapping[str, str]) -> dict[str, dict[str, Provenance]]:
    """`ties` of each of `texts` ({place: text}), the facts' sentences keyed once for them all."""
    by_key: dict[str, set[str]] = {}
    for fact_id, content in facts.items():
        for piece in {content, *split_sentences(content)}:
            by_key.setdefault(sentence_key(piece), set()).add(fact_id)
    out = {}
    for place, text in texts.items():
        found = (sentence_key(sentence) for sentence in sentences_of(text))
        out[place] = {key: Provenance(frozenset(by_key[key])) for key in found if key in by_key}
    return out


def merge_sources(*parts: Sources | None) -> dict[str, Provenance]:
    """One provenance mapping from several (a sentence's sources are the union of what each says)."""
    out: dict[str, Provenance] = {}
    for part in parts:
        for key, known in (part or {}).items():
            out[key] = out[key] | known if key in out else known
    return out


def contradictions(texts: Iterable[tuple[str, str]], invalid: Sequence[Retired], valid: Sequence[str],
                   sources: Mapping[str, Sources] | None = None,
                   valid_ids: Iterable[str] | None = None) -> list[tuple[str, str, str, str]]:
    """(place, sentence, fact id, how it was found) for every sentence of the given (place, text) pairs that states
    an invalid fact no valid fact states again (`sources`: each place's provenance, read first; see `judge`): what
    `memory-core doctor` reports."""
    found: list[tuple[str, str, str, str]] = []
    for place, text in texts:
        for line in text.split("\n"):
            bullet = _BULLET.match(line)
            for sentence in ([bullet.group(2)] if bullet else split_sentences(line)):
                old, how = judge(sentence, invalid, valid, (sources or {}).get(place), valid_ids)
                if old is not None:
                    found.append((place, sentence, old.fact_id, how or "words"))
    return found
