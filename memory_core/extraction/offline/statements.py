"""What a third-person statement about the user is about, and when one replaces another.

A statement ("User lives in Porto") fills slots ("residence" = "porto"; "named:dog" = "max" for "User's dog is called
Max"; "count:user has # kid" = "3" for "User has 3 kids"); a later statement in the same single-valued slot, or any
statement said as a correction ("actually", "now", "no longer", "moved to", ...), supersedes the one it contradicts
instead of standing beside it; one said as an addition ("also", "too") replaces nothing. The offline extractor
(heuristics.py) and the offline Deep Dream (tiers/offline_dream.py) both reason with these."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_core.text.words import NUMBER_WORDS, STOPWORDS, stem, words

_THIRD = {"like": "likes", "love": "loves", "enjoy": "enjoys", "prefer": "prefers", "hate": "hates",
          "dislike": "dislikes", "adore": "adores", "work": "works", "live": "lives", "want": "wants",
          "plan": "plans", "hope": "hopes", "need": "needs", "use": "uses", "study": "studies",
          "have": "has", "own": "owns", "know": "knows", "speak": "speaks", "play": "plays",
          "usually": "usually", "always": "always", "often": "often", "never": "never",
          "tend": "tends", "am": "is", "was": "was", "teach": "teaches", "run": "runs", "write": "writes",
          "read": "reads", "drink": "drinks", "eat": "eats", "avoid": "avoids", "volunteer": "volunteers",
          "go": "goes", "do": "does", "are": "is", "were": "was"}  # "My partner and I are saving": "User is saving"
# Verbs that stay as they are after "User": the past tense and the modals ("User quit", "User can").
_KEEP_VERB = frozenset("""quit left went got made took had did was were saw came ran bought found began wrote met told
said thought felt knew gave put set spent won lost built sent kept held brought taught caught paid slept grew became
chose drove rode wore fell flew forgot hung hid hurt let meant rose sang sat shook shot shut sold spoke stole stood
stuck swam threw understood woke tore broke drew drank ate fed fought forgave froze heard led lent rang sought struck
swore swept wept
can can't cannot could will would should shall might may must""".split())


_NEGATED = {"haven't": "hasn't", "don't": "doesn't", "aren't": "isn't", "weren't": "wasn't"}


def conjugate(verb: str) -> str:
    """Third person singular of a regular English verb: review -> reviews, watch -> watches, try -> tries."""
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person_verb(verb: str) -> str:
    """The verb after "User": like -> likes, am -> is; past tenses and modals as they are (quit, can)."""
    verb = verb.lower()
    if verb in _THIRD:
        return _THIRD[verb]
    if verb.endswith(("n't", "n’t")):  # won't, can't, wasn't stay; haven't -> hasn't, aren't -> isn't
        return _NEGATED.get(verb.replace("’", "'"), verb.replace("’", "'"))
    if verb in _KEEP_VERB or verb.endswith("ed"):
        return verb
    return conjugate(verb)


@dataclass(frozen=True)
class Slot:
    """One thing a statement says about the user: ("residence", "porto"); negated: it is no longer so (a value
    of None: whatever it was, e.g. "User changed jobs")."""

    key: str
    value: str | None
    negated: bool = False


# (slot, pattern on the third-person content, whether the pattern itself says "no longer"). Patterns that do not
# negate are matched on the positive form ("User no longer lives in X" -> "User lives in X", negated).
_OCCUPATION = (r"(?:[\w-]+\s+){0,3}(?:engineer|developer|programmer|designer|manager|nurse|doctor|teacher|student"
               r"|scientist|analyst|lawyer|writer|consultant|researcher|architect|accountant|lead|founder|freelancer"
               r"|midwife|pharmacist|paramedic|firefighter|librarian|dentist|surgeon|therapist|chef|electrician|plumber"
               r"|pilot|professor|lecturer|journalist|photographer)s?")
SLOT_PATTERNS: list[tuple[str, re.Pattern[str], bool]] = [(k, re.compile(p), n) for k, p, n in [
    ("residence", r"^User (?:lives|is living|resides|is based) in (?P<value>.+)$", False),
    # a place and nothing after it: "User is in Manchester for a conference" is a trip
    ("residence", r"^User is in (?P<value>[A-Z][\w'.-]*(?:,? [A-Z][\w'.-]*)*)$", False),
    ("residence", r"^User (?:has )?(?:moved|relocated) to (?P<value>.+)$", False),
    ("residence", r"^User (?:has )?(?:moved|relocated) from .+? to (?P<value>[A-Z].*)$", False),
    ("residence", r"^User (?:has )?moved (?:away )?(?:out of|from) (?P<value>.+)$", True),
    ("employer", r"^User (?:works|is working) (?:at|for) (?P<value>.+?)(?: as .+)?$", False),
    ("employer", rf"^User is an? {_OCCUPATION} (?:at|for) (?P<value>.+)$", False),
    # "I'm with KPMG now": an organisation written in capitals ("I'm with Sarah now" is someone else's news)
    ("employer", r"^User is (?:now )?with (?P<value>[A-Z]{2,}[\w&.-]*(?: [A-Z][\w&.-]*)*)$", False),
    ("employer", r"^User (?:has )?(?:started|got|took|accepted|landed|began) (?:a |the |their )?(?:new )?"
                 r"(?:job|position|role|post) (?:at|with) (?P<value>.+)$", False),
    # "User started at Globex last month": an organisation in capitals ("started at the bottom", "at 6 am" are not)
    ("employer", r"^User (?:has )?(?:finally )?(?:started|began) (?:work(?:ing)? )?at (?P<value>[A-Z][\w&.-]*"
                 r"(?: [A-Z][\w&.-]*)*)(?: (?:in|on|last|this|as|a|two|three|after)\b.*)?$", False),
    ("employer", r"^User (?:has )?(?:quit|left) (?:their|the|a) job(?: (?:at|with) (?P<value>.+))?$", True),
    ("employer", r"^User (?:has )?changed jobs\b.*$", True),
    ("job", r"^User (?:works|is working) (?:at|for) .+? as (?P<value>.+)$", False),
    ("job", r"^User works as (?P<value>.+)$", False),
    ("job", rf"^User is (?P<value>(?:an? )?{_OCCUPATION})(?: (?:at|for) .+)?$", False),
    ("job", rf"^User (?:has )?(?:finally )?became (?P<value>(?:an? )?{_OCCUPATION})\b.*$", False),  # a change
    ("job", r"^User (?:has )?(?:quit|left) (?:their|the|a) job\b.*$", True),
    ("job", r"^User (?:has )?changed jobs\b.*$", True),
    ("name", r"^User's name is (?P<value>.+)$", False),
    ("name", r"^User (?:is called|goes by) (?P<value>.+)$", False),
    ("age", r"^User is (?P<value>\d{1,3})(?: years old)?$", False),
    ("age", r"^User's age is (?P<value>\d{1,3})$", False),
    ("partner", r"^User's (?:wife|husband|partner|girlfriend|boyfriend|spouse)(?:'s name)? is (?:called |named )?"
                r"(?P<value>.+)$", False),
    ("partner", r"^User is married to (?P<value>.+)$", False),
    ("partner", r"^User (?:has )?(?:broke up|split up|separated|got divorced) (?:with|from) (?P<value>[A-Z][\w'-]*"
                r"(?: [A-Z][\w'-]*)?)\b.*$", True),
    ("partner", r"^User (?:has )?divorced (?P<value>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\b.*$", True),
    ("favourite:{topic}", r"^User's favou?rite (?P<topic>[\w -]+?) is (?P<value>.+)$", False),
    ("favourite:", r"^User's favou?rite is (?P<value>.+)$", False),  # "my favourite is jazz": of no named kind
    ("prefers:{pair}", r"^User prefers (?P<value>.+?) (?:over|to|rather than|instead of) (?P<other>.+)$", False),
    # What the user's own things are called or are: "User's dog's name is Max" and "User's dog is called Rex" are one
    # slot, "User's birthday is March 13" another.
    ("named:{topic}", r"^User's (?P<topic>(?:[\w-]+ ){0,2}?[\w-]+)(?:'s name is| is (?:called|named)) (?P<value>.+)$",
     False),
    ("a-named:{topic}", r"^User has an? (?P<topic>[\w-]+) (?:called|named) (?P<value>.+)$", False),  # one of some
    ("own:{topic}", r"^User's (?P<topic>(?:[\w-]+ ){0,2}?[\w-]+) (?:is|are) (?!(?:called|named) )(?P<value>.+)$",
     False),
    ("marital", r"^User is (?:now |happily |newly )?(?P<value>single|married|engaged|divorced|widowed|separated)\b.*$",
     False),
    ("marital", r"^User (?:has )?got (?P<value>married|engaged|divorced)\b.*$", False),
    ("vehicle", r"^User (?:\w+ly )?(?:drives|rides|is driving|is riding) (?:an? |the |their )?(?P<value>.+)$", False),
    ("vehicle", r"^User's (?:car|vehicle) is (?:an? |the )?(?P<value>.+)$", False),  # "my car's a Civic now"
    ("own:manager", r"^User (?:reports|is reporting|now reports) to (?P<value>[A-Z].*)$", False),  # who they report to
    # what the user is learning: one more beside another, unless said as a change ("switched to learning Japanese")
    ("learning", r"^User (?:is learning|learns|is studying|studies) (?!(?:at|in|for|with|on|to|from|under)\b)"
                 r"(?P<value>.+)$", False),
    ("learning", r"^User (?:has )?(?:switched|moved|moved over|changed|went) to (?:learning|studying) (?P<value>.+)$",
     False),
    ("diet", r"^User is (?:\w+ly )?(?P<value>vegan|vegetarian|pescatarian|omnivore|carnivore)\b.*$", False),
    ("diet", r"^User (?:\w+ly )?eats (?P<value>meat)\b.*$", False),
]]
# "User codes in Rust", "User writes with a fountain pen": a verb and what it is done in or with, for a correction of
# that ("I play tennis now" beside "User plays football" is left alone: it may well be one more).
_DOES = re.compile(r"^User (?:\w+ly )?(?P<verb>(?!(?:is|has|was|lives|works|likes|loves|enjoys|prefers|adores|hates"
                   r"|dislikes|moved|got|quit|left|changed|switched|no|does|did|used|wants|plans|hopes|needs|would|will"
                   r"|can|could|should|might|may|must)\b)[a-z]+s) (?P<prep>in|with|at|on|for|from|as|by) "
                   r"(?P<value>.+)$")
# "User switched from Vim to Emacs": what was before is no longer, what follows is now.
_FROM_TO = re.compile(r"^User (?:has )?(?:switched|moved|changed|went|migrated|converted|upgraded|downgraded) from "
                      r"(?P<old>.+?) to "
                      r"(?P<value>.+)$")
# Facts about the user's own things whose value is one at a time (a new one replaces the old without a cue).
_ONE_OWN = re.compile(r"^(?:named:.*|own:(?:birthday|nickname|name|middle name|last name|surname|full name|age"
                      r"|(?:native|main|first|mother) (?:language|tongue)|mother tongue|blood type|height|weight"
                      r"|anniversary|due date|zodiac sign|star sign))$")
# Slots that hold one value at a time: a new value replaces the old one even without a correction cue.
SINGLE_VALUED = ("residence", "employer", "job", "name", "age", "partner", "favourite:", "prefers:", "marital", "diet",
                 "count:")
# A liking is about its head noun ("pref:answer" for "prefers short answers"); some nouns share a topic.
_LIKING = re.compile(r"^User (?:\w+ly )?(?:likes|loves|enjoys|prefers|adores|hates|dislikes|drinks|uses|plays|eats"
                     r"|(?:has )?(?:switched(?: over)?|moved over|changed over|went over|migrated) to) (?P<value>.+)$")
_HEAD_END = re.compile(r",|\s+(?:in|at|on|for|with|over|to|from|during|when|because|so|than|rather|instead|and|or"
                       r"|every|each)\b")
TOPICS = {"drink": ("tea", "coffee", "matcha", "espresso", "decaf"),
          "editor": ("vim", "neovim", "emacs", "vs code", "vscode", "sublime text", "pycharm", "intellij", "zed"),
          "os": ("linux", "macos", "windows", "mac", "ubuntu", "chromeos")}
_POSITIVE: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"^User no longer "), "User "),
    (re.compile(r"^User(?P<s>'s [\w -]+?)? is (?:no longer|not) "), lambda m: f"User{m.group('s') or ''} is "),
    (re.compile(r"^User (?:does not|doesn't) (?P<v>[\w-]+)"), lambda m: f"User {third_person_verb(m.group('v'))}"),
    (re.compile(r"^User (?:has )?(?:quit|stopped|gave up) (?!(?:their|the|a) job\b)"), "User "),
]


def _value(text: str | None) -> str | None:
    if text is None:
        return None
    text = re.sub(r"^(?:a|an|the)\s+", "", text.strip().rstrip(".!").casefold())
    return " ".join(text.split()) or None


# Topics said in several words that name one thing ("my number" and "my phone number", "my email address").
_SAME_TOPIC = {**dict.fromkeys(("number", "phone", "phone number", "mobile", "mobile number", "cell", "cell number",
                                "cell phone number", "telephone number", "mobile phone number"), "phone"),
               **dict.fromkeys(("email", "e-mail", "email address", "e-mail address", "mail address"), "email"),
               **dict.fromkeys(("address", "home address", "postal address", "street address"), "address"),
               **dict.fromkeys(("doctor", "gp", "family doctor", "physician", "primary care doctor",
                                "primary care physician", "general practitioner", "doc"), "doctor"),
               **dict.fromkeys(("manager", "boss", "line manager", "supervisor"), "manager")}


def positive(content: str) -> tuple[str, bool]:
    """The content said positively, and whether it was negated: 'User no longer plays chess' -> ('User plays
    chess', True); 'User quit smoking' -> ('User smoking', True)."""
    for pattern, replacement in _POSITIVE:
        new = pattern.sub(replacement, content, count=1)
        if new != content:
            return new, True
    return content, False


@lru_cache(maxsize=4096)  # a stored fact is read again by each update that finds it
def slots_of(content: str) -> tuple[Slot, ...]:
    """The slots a third-person statement fills, from the SLOT_PATTERNS table, its liking and its frames, if any."""
    plain, negated = positive(content)
    found: dict[str, Slot] = {}
    for key, pattern, negates in SLOT_PATTERNS:
        if key.startswith("own:") and found:
            continue  # "User's name is Ana": the named slot says it
        match = pattern.match(content if negates else plain)
        if not match:
            continue
        groups = match.groupdict()
        if "{topic}" in key:
            topic = _value(groups["topic"])
            key = key.format(topic=_SAME_TOPIC.get(topic, topic))
        elif "{pair}" in key:
            key = key.format(pair="|".join(sorted((_value(groups["value"]) or "", _value(groups["other"]) or ""))))
        found.setdefault(key, Slot(key, _value(groups.get("value")), negates or negated))
    liking = _LIKING.match(plain)
    if liking:
        thing = _value(liking.group("value")) or ""
        head = _HEAD_END.split(thing, 1)[0].split()
        if head:
            found.setdefault(f"pref:{stem(head[-1])}", Slot(f"pref:{stem(head[-1])}", thing, negated))
        for topic, names in TOPICS.items():
            name = next((n for n in names if re.search(rf"\b{re.escape(n)}\b", thing)), None)
            if name:
                found.setdefault(f"topic:{topic}", Slot(f"topic:{topic}", name, negated))
    for slot in _frames(plain, negated, bool(found)):
        found.setdefault(slot.key, slot)
    owned = _HAS.match(plain)  # what a change may say the user left ("traded in the Corolla for a Kia")
    if owned:
        found.setdefault("has", Slot("has", _value(owned.group("value")), negated))
    return tuple(found.values())


_HAS = re.compile(r"^User (?:owns (?:an? |the |their )?|has (?:an? |their ))(?P<value>[\w' -]+)$")
_UNPARTNERED = ("single", "divorced", "widowed", "separated")


def _kin(key: str) -> str:
    """The slot a key is about: "User has a dog named Rex" (a-named:, one dog of some) and "User's dog is called
    Max" (named:, the dog) name one dog; only the second says there is no other."""
    return key[2:] if key.startswith("a-named:") else key


def _frames(plain: str, negated: bool, named: bool) -> list[Slot]:
    """The slots any statement fills: for "switched from X to Y", X as no longer (its liking, negated) and Y's liking;
    for a statement of no `named` kind, its counted things ("count:User has # kids" = "3") and a verb's object
    ("does:code in" = "rust")."""
    found: list[Slot] = []
    from_to = _FROM_TO.match(plain)
    if from_to:  # "moved from Lisbon to Porto" is a move (named): only a known topic (an editor, an OS) changes
        found += [Slot(s.key, s.value, True) for s in slots_of(f"User uses {from_to.group('old')}")]
        found += list(slots_of(f"User uses {from_to.group('value')}"))
        found = [s for s in found if not named or s.key.startswith("topic:")]
    if named:
        return found
    tokens = [NUMBER_WORDS.get(w, w) for w in words(plain)]
    numbers = [t for t in tokens if t.isdigit() and len(t) < 4]  # a year dates a statement rather than counts
    if numbers:
        frame = " ".join("#" if t in numbers else stem(re.sub(r"(?<=\w\w\w)s$", "", t)) for t in tokens)
        found.append(Slot(f"count:{frame}", " ".join(numbers), negated))
    does = _DOES.match(plain)
    if does and not from_to:
        found.append(Slot(f"does:{stem(does.group('verb'))} {does.group('prep')}",
                          _value(does.group("value")), negated))
    return found


_CATEGORY_OF_THIRD_PERSON: list[tuple[str, re.Pattern[str]]] = [(c, re.compile(p)) for c, p in [
    ("goal", r"^User (?:\w+ly )?(?:wants|plans|hopes|intends|aims|needs|would like|is (?:planning|trying|hoping|going"
             r"|training for|saving for|preparing))\b|^User's goal\b"),
    ("behavior", r"^User (?:usually|always|often|never|normally|typically|tends to|sometimes|regularly|trains"
                 r"|exercises|works out|reviews|cooks|swims|commutes|meditates|wakes up|gets up)\b"),
    ("preference", r"^User (?:\w+ly )?(?:likes|loves|enjoys|prefers|adores|hates|dislikes|avoids|can't stand"
                   r"|does not like|no longer likes|has switched to|switched to)\b|^User's favou?rite\b"
                   r"|\b(?:works? best for|suits?) (?:the user|them|User)\b"),
    ("knowledge", r"^User (?:uses|knows|speaks|owns|plays|writes|reads|is learning|has experience)\b"),
    ("context", r"^User(?:'s)? (?:\w+ )?(?:lives|works|moved|grew up|studies|teaches|is|has|was|changed|quit|left"
                r"|started|name|age|wife|husband|partner|son|daughter|kids|children|dog|cat|job|team|company"
                r"|boss|no longer)\b"),
]]


def classify(content: str) -> str | None:
    """The category of a third-person statement ("User loves surfing" -> preference), None if none fits."""
    for category, pattern in _CATEGORY_OF_THIRD_PERSON:
        if pattern.search(content):
            return category
    return None


@dataclass(frozen=True)
class Statement:
    """A third-person statement about the user with what it is about (its slots) and how it was said."""

    content: str
    category: str | None
    confidence: float
    slots: tuple[Slot, ...] = ()
    cue: bool = False  # said as a correction or a change
    negated: bool = False  # says that something stopped being so
    hedged: bool = False
    adds: bool = False  # said as one more ("also", "too", "another"): it replaces nothing it does not negate
    restates: str | None = None  # the stored fact it says again with a word set right ("I meant X, not Y"): it replaces it


def describe(content: str, category: str | None = None, confidence: float = 1.0, *, cue: bool = False,
             hedged: bool = False, adds: bool = False) -> Statement:
    """A Statement for third-person `content` (a stored fact, a MEMORY.md bullet, a rule's output)."""
    slots = slots_of(content)
    negated = positive(content)[1] or any(s.negated for s in slots)
    return Statement(content, category or classify(content), confidence, slots, cue, negated, hedged, adds)


def single_valued(key: str) -> bool:
    """Whether a slot holds one value at a time (where the user lives) rather than many (what they like)."""
    return key.startswith(SINGLE_VALUED) or bool(_ONE_OWN.match(key))


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS}


# Something the user had or did, ended: "User sold the Civic and bought a Tesla", "User gave up Spanish", "User stopped
# playing the violin", "User quit tennis after the surgery". What ended is the head of the phrase after the verb;
# it ends a fact of the user's own that has or does that thing (kind: what the verb ends).
_ENDED = re.compile(r"^User (?:has )?(?:finally )?(?P<verb>sold|got rid of|gave away|gave up on|gave up|quit|stopped"
                    r"|dropped|left|moved on from|graduated from)"
                    r"(?: (?:playing|learning|studying|practi[cs]ing|doing|taking|riding|driving|using))?"
                    r" (?P<what>.+)$")
_ENDED_PLACE = re.compile(r"(?:at|by|in|on|to|for|with|from|off|over|there|here)\b")  # "stopped at the bakery"
_ENDED_CUT = re.compile(r",|;|\s+[—–-]+\s|\s+(?:and|but|so|because|since|after|before|when|in|on|at|last|this|for|to"
                        r"|with|as|now"
                        r"|again|anymore|any more)\b")
_ENDS = {"sold": "own", "got rid of": "own", "gave away": "own", "gave up on": "do",
         "gave up": "do", "quit": "do", "stopped": "do", "dropped": "do", "left": "in", "moved on from": "in",
         "graduated from": "study"}
_HAS_OR_DOES = {
    "own": re.compile(r"^User (?:\w+ly )?(?:drives|owns|has|rides|uses|keeps)\b"),
    "do": re.compile(r"^User (?:\w+ly )?(?:plays|is learning|learns|practi[cs]es|does|studies|takes|goes|uses|is taking"
                     r"|is studying|attends|rides|smokes|drinks)\b"),
    # "User left Globex" ends where they work, live, study or play: a place or a group they were in
    "in": re.compile(r"^User (?:\w+ly )?(?:works|is working|lives|is living|is based|studies|is studying|teaches|plays"
                     r"|sings|volunteers|is a member|belongs|attends|goes to)\b"),
    # "User graduated from MIT" ends "User is a student at MIT", "User studies law at Leiden University"
    "study": re.compile(r"^User (?:\w+ly )?(?:studies|is studying|is an? (?:[\w-]+ ){0,2}(?:student|pupil)|attends"
                        r"|is enrolled|goes to)\b"),
}


def _ends(new: Statement, old: Statement) -> bool:
    """Whether `new` says that what `old` says the user has or does ended (see _ENDED)."""
    ended = _ENDED.match(new.content)
    if ended is None or _ENDED_PLACE.match(ended.group("what")):
        return False  # "User stopped at the bakery": a place, not a thing that ended
    what = _ENDED_CUT.split(ended.group("what"), 1)[0].split()
    head = stem(what[-1].casefold()) if what else ""
    return bool(head) and head in _stems(old.content) and bool(_HAS_OR_DOES[_ENDS[ended.group("verb")]].match(
        old.content))


_REASON = re.compile(r",|;|\s+(?:because|since|as|after|due to|now that|so|ever since)\b")


def _owned(value: str) -> frozenset[str]:
    """A slot's value without whose it is ("their android" -> {"android"})."""
    return frozenset(value.split()) - {"their", "my", "our", "his", "her", "the", "a", "an"}


def supersedes(new: Statement, old: Statement) -> bool:
    """Whether `new` replaces `old`: they fill a slot differently and either the slot holds one value or `new`
    was said as a correction; or `new` says, as a change, that what `old` says stopped ("User quit smoking" and
    "User smokes")."""
    if new.hedged or (new.adds and not new.negated) or new.content.casefold() == old.content.casefold():
        return False
    if new.restates is not None and new.restates.casefold() == old.content.casefold():
        return True
    theirs = {_kin(s.key): s for s in old.slots}
    mine_of = {s.key: s for s in new.slots}
    if "marital" in mine_of and mine_of["marital"].value in _UNPARTNERED and not mine_of["marital"].negated \
            and "partner" in theirs and not theirs["partner"].negated:
        return True  # "User is single" ends "User's partner is Sofia"
    shared = [(s, theirs[_kin(s.key)]) for s in new.slots if _kin(s.key) in theirs]
    for mine, other in shared:
        if (mine.value, mine.negated) == (other.value, other.negated):
            continue
        if not (single_valued(mine.key) or new.cue):
            continue
        if mine.negated != other.negated:
            if None in (mine.value, other.value) or mine.value == other.value or mine.key.startswith("pref:"):
                return True
        elif not mine.negated:
            return True
    if new.cue:  # "switched from iPhone to a Pixel" ends "User's phone is an iPhone": what it left, the old one holds
        left = {s.value for s in new.slots if s.negated and s.value}
        gone = [_owned(value) for value in left]  # "their android" left: "android phone" held it
        if left and any(not s.negated and s.value and (s.value in left or any(g and g <= _owned(s.value) for g in gone))
                        for s in old.slots):
            return True
    if new.negated and new.cue and not shared:  # "User no longer runs because of their knee": the reason is not what ended
        wanted = _stems(_REASON.split(positive(new.content)[0], 1)[0])
        if wanted and wanted <= _stems(old.content):
            return True
    return _ends(new, old)
