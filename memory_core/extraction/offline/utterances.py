"""What a person wrote, made ready for the offline extractor's rules (heuristics.py).

People rarely write "I live in Lisbon." on a line of its own. They greet ("Hi! I'm Ana, a backend engineer at Acme
in Lisbon."), announce ("Quick update: ..."), write in lower case without apostrophes ("im a dev"), list several
things at once ("I'm 41, married, with three kids"), ask on the way ("I'm on FastAPI, how do I ...?"), imagine ("If
I lived in Berlin ...") and quote others. This module turns a message into the plain first-person clauses the rules
read ("my name is Ana", "I'm a backend engineer at Acme", "I live in Lisbon") and leaves out what is not the user's
own statement about themselves."""

from __future__ import annotations

import re

from memory_core.extraction.offline.foreign_jobs import job_clauses
from memory_core.extraction.offline.foreign_statements import foreign_clauses
from memory_core.extraction.offline.changes import change_after_lead, restate

MAX_SENTENCE = 1000
# Sentences end at . ! ? or a line break, but not after "Dr." or "e.g.".
_SENTENCE = re.compile(r"(?<!\bdr\.)(?<!\bmr\.)(?<!\bms\.)(?<!\bst\.)(?<!\bmrs\.)(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
                       r"(?<=[.!?])\s+|\n+", re.I)
# Spelling as typed on a phone: "im", "ive", "dont", "i", curly apostrophes.
_SPELLING = [(re.compile(p, f), r) for p, f, r in [
    (r"[’‘`]", 0, "'"), (r"\bi\b(?!\.e\.)", 0, "I"), (r"\bim\b", re.I, "I'm"), (r"\bive\b", re.I, "I've"),
    (r"\b(do|does|did|can|is|was|are|have|has)nt\b", re.I, r"\1n't"), (r"\bname's\b", re.I, "name is"),
    (r"\bcant\b", re.I, "can't"), (r"\bI(?:'ve|\s+have)\s+got\b", 0, "I have"), (r"\bwont\b", re.I, "won't"),
    (r"\bI\s+m\b", 0, "I'm"), (r"\bgonna\b", re.I, "going to"), (r"\bwanna\b", re.I, "want to"),
    (r"\bgotta\b", re.I, "have to"),
    # "my birthday's on the 4th", "my car's a Civic": "is", not an owner ("my brother's 3 kids", "my dad's car")
    (r"\b(my\s+[\w-]+)'s(?=\s+(?:on|in|at|a|an|the|now|called|named)\b)", re.I, r"\1 is"),
]]
# Opening words that say nothing themselves: "Oh, well, btw, ...".
_LEAD = re.compile(r"^(?:(?:oh|well|so|hey|hi|hello|yeah|yes|also|and|but|btw|by the way|honestly|anyway|ok|okay|lol"
                   r"|haha|hmm+|um+|fwiw|tbh|p\.?s\.?),?\s+)+", re.I)
# A correction or change said up front: "Actually, I ...", "No wait, my name is ...", "These days I ...".
_CUE_LEAD = re.compile(r"^(?:actually|correction|sorry|no|oops|wait|in\s+fact|these\s+days|nowadays|now|lately"
                       r"|i\s+meant|i\s+misspoke|(?:it\s+)?turns\s+out(?:\s+that)?|scratch\s+that)\b\s*[,:!.-]?\s*"
                       r"(?=(?:i|my|actually|sorry|wait|i\s+meant)\b)", re.I)
_GREETING = re.compile(r"^(?:hi|hey|hello|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening|day))"
                       r"(?:\s+(?:there|all|everyone|again|chatgpt|claude))?\b[\W_]*?(?=\w|$)", re.I)
# "Quick update:", "FYI", "For context:", "Just wanted to let you know that ...".
_PREAMBLE = re.compile(
    r"^(?:(?:(?:a|an|one\s+more|another)\s+)?(?:(?:quick|small|little|big|short|brief|life|personal|important|some)\s+)?"
    r"(?:update|note|news|fyi|heads[\s-]up|psa|context|background|info|reminder)(?:\s+(?:on\s+my\s+end|from\s+me"
    r"|about\s+me|for\s+you))?|for\s+(?:context|reference|the\s+record|background|what\s+it's\s+worth)"
    r"|(?:just\s+)?(?:so\s+you\s+know|fyi|a\s+heads[\s-]up|letting\s+you\s+know|to\s+let\s+you\s+know)"
    r"|(?:I\s+)?(?:just\s+)?(?:wanted|want|thought\s+I'd|thought\s+I\s+should)\s+(?:to\s+)?(?:let\s+you\s+know|say"
    r"|mention|tell\s+you|share|update\s+you)|as\s+you\s+(?:may\s+)?know|in\s+case\s+it\s+helps|fun\s+fact)"
    r"\b(?:\s+that)?\s*[:,!.;–—-]*\s*", re.I)
# "Sorry, typo: my name is ...", "Quick question first, some background: I'm ...": a short head before a colon.
# "I moved: I work at ...": a head of the user's own that says a change.
_HEAD = re.compile(r"^(?P<head>(?:I\s+meant\b)?[^:I]{1,50}|I\s+(?:moved|changed|switched|updated)\b[^:]{0,40}):\s*"
                   r"(?=(?:I|my|My)\b)")
_CUE_WORDS = re.compile(r"\b(?:correction|sorry|typo|actually|oops|wait|fix|meant|moved|changed|switched|updated)\b",
                        re.I)
# "Kotlin is my main language", "Not Java but Kotlin is my main language": the user's thing named first.
_INVERTED = re.compile(r"^(?P<not>not\s+[^,]{1,30}?,?\s+but\s+)?(?P<value>(?!(?:This|That|It|Here|There|What|Which|Who"
                       r"|That's|It's|Mine)\b)[A-Z][\w+#.'-]*(?:\s+[A-Z][\w+#.'-]*){0,2})\s+is\s+(?:now\s+)?my\s+"
                       r"(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+)(?P<tail>\s+(?:now|nowadays|these\s+days))?$", re.I)
_QUOTED = [re.compile(p, re.I) for p in (  # what someone else said or wrote, quoted
    r"(?:(?<=:)|\b(?:said|says|told\s+me|wrote|writes|asked|replied|goes)\b:?)\s*[\"“«][^\"”»]*[\"”»]?",
    r"(?:(?<=:)|\b(?:said|says|told\s+me|wrote|writes|asked|replied|goes)\b:?)\s*'(?=\S)[^\n]*'",
)]
_QUESTION = re.compile(r"^(?:do|does|did|am|is|are|was|were|can|could|should|would|will|shall|may|must|have|has"
                       r"|what|what's|whats|how|why|where|when|which|who|whom|whose|any\s+(?:idea|ideas|tips|thoughts"
                       r"|advice|suggestions)|tell\s+me|explain|help|please|pls|remind\s+me|let\s+me\s+know|if|unless"
                       r"|wondering|i\s+wonder)\b", re.I)
_HYPOTHETICAL = re.compile(r"^(?:pretend|imagine|suppose|supposing|assume|let's\s+say|lets\s+say|say|hypothetically|what\s+if"
                           r"|in\s+(?:the|this|my|a|our)\s+(?:story|game|novel|scenario|role-?play|script|book|dream)"
                           r"|role-?play|act\s+as|write|rewrite|rephrase|draft|generate|create|make|give|show|list|summari[sz]e|translate"
                           r"|fix|edit|review|explain|find|suggest|recommend|compare)\b", re.I)
# From here on the sentence is someone else's, a hypothesis or a request: "..., as if I were ...", "..., so please".
_CUT = re.compile(r"(?:[,;]|\s[-–—]+)?\s+(?:so\s+|and\s+)?(?:as\s+if|as\s+though|if\s+I|please|pls|plz|can\s+you"
                  r"|could\s+you|would\s+you|will\s+you|do\s+you|any\s+(?:tips|ideas|advice|suggestions|thoughts"
                  r"|recommendations)|how\s+(?:do|can|should|would)\b|what\s+(?:do|should|would|can|is|are)\s"
                  r"|which\s|is\s+there|help\s+me|tips\s+on)\b.*$", re.I)
_FILLER_TAIL = re.compile(r"[\s,]*\b(?:lol|lmao|haha+|hehe|pls|please|plz|thx|thanks|tbh|honestly|btw)\W*$|\s*[:;]-?[)D(P]"
                          r"\s*$", re.I)
_WE = re.compile(r"^(?:(?:so\s+)?now\s+)?we(?:'ve|’ve|\s+have)?\s+(?=(?:just\s+|finally\s+|recently\s+)?(?:adopted|bought|moved|relocated"
                 r"|live|replaced|swapped|traded|use"
                 r"|got\s+(?:married|engaged|a|our\s+own)"
                 r"|had\s+(?:a|our)\s+(?:baby|son|daughter)|have\s+(?:a|an|two|three|four|\d+)\s))", re.I)
# "We're moving to Porto", "We're planning a trip ...": the user's own, read as "I'm ..."
_WE_ARE = re.compile(r"^(?:we(?:'re|’re|\s+are)|(?:our|my)\s+family(?:'s|\s+is))\s+"
                     r"(?=(?:now\s+|finally\s+)?(?:expecting|engaged|married|moving|vegan"
                     r"|vegetarian|planning|renovating|flying|heading|travel(?:l)?ing)\b)", re.I)
_SUBORDINATE = re.compile(r"^(?:since|because|as|now\s+that|given\s+that|seeing\s+as)\s+(I\b[^,]{3,80}),\s*(.*)$", re.I)
# "We adopted a second kitten, so now we have two cats": what happened, then what the user has since
# "Our old dog passed away, so now we only have one dog", "My parents adopted a girl, so now I have two sisters", "one
# of our cats died, so we have one cat now": what happened (whoever it happened to), then how many the user has since
_HAVE = r"(?:now\s+)?(?:we|I)\s+(?:only\s+|still\s+|now\s+)?have\s+(?:only\s+|just\s+)?"  # "now we only have"
_SO_NOW = re.compile(r"^([^,]{3,80}),\s*(?:and\s+)?(?=so\b|now\b|(?:we|I)\b.*\bnow\b)(?:so\s+)?(" + _HAVE
                     + r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s.*)$", re.I)
_HAVE_COUNT = re.compile("^" + _HAVE, re.I)
_AS_A = re.compile(r"^as\s+(an?\s+[^,]{3,50}),\s*(.*)$", re.I)
# Another first-person clause in the same sentence: "..., and I love X", "...; my wife is Ana", "..., I moved".
_CLAUSE = re.compile(r"\s*[;,]?\s+(?:and|but|so|because|though|although|while)\s+(?=(?:now\s+)?(?:I|my|My)\b)"
                     r"|\s*[;,]\s+(?=(?:I|my|My)\b)|\s+[—–]\s+(?=(?:I|my|My)\b)")
# Verbs that start a clause of their own without "I": "I live in Austin, work at Dell"; "I'm 5'9 and weigh 70 kg".
_VERB = (r"(?:now\s+|also\s+|just\s+|recently\s+|currently\s+)?(?:work|live|love|like|hate|enjoy|prefer|play|speak"
         r"|teach|study|run|own|use|need|want|go|got|weigh|earn|joined|moved|started|manage|lead|drive|cook|write"
         r"|train|swim|drink|eat|spend|volunteer|coach|grew\s+up|make|build|speak|sleep|have\s+(?:a|an|two|three"
         r"|four|\d+)\b)")
_CONTINUATION = re.compile(rf"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?={_VERB}\b)", re.I)
# "Running is my way to relax", "Cooking for friends makes me happy": an -ing phrase that a verb follows is what the
# sentence is about, not something the speaker is doing ("Heading to the gym" is "I'm heading to the gym"): it is
# what the speaker finds ("User finds running is their way to relax").
_GERUND_SUBJECT = (r"(?:is|was|are|were|isn't|wasn't|aren't|weren't|been|makes|made|helps|helped|has|had|gives|gave"
                   r"|keeps|kept|brings|brought|feels|felt|seems|seemed|means|meant|looks|sounds|lets|let|gets|got"
                   r"|takes|took|matters|mattered|can|could|will|would|might|should|must|doesn't|didn't|can't|won't)")
# ... with the verb in the same clause: words up to it, none a comma's, a dash's, nor one that opens a clause of its own
# ("Working on a project that is fun" is a doing)
_GERUND_PHRASE = (r"[a-z]+ing(?:['\u2019]s\b|(?:\s+(?!(?:that|which|who|whom|whose|where|when|while|because|since|if"
                  r"|as|so|but|though|although)\b)[\w'\u2019&-]+){0,7}?\s+" + _GERUND_SUBJECT + r"\b)")
# Words in -ing that describe rather than do: "Exciting but kinda nerve-wracking" is no "I'm exciting".
_ING_ADJECTIVES = (r"exciting|amazing|interesting|inspiring|relaxing|boring|tiring|exhausting|overwhelming|terrifying"
                   r"|frightening|annoying|frustrating|fascinating|refreshing|satisfying|disappointing|embarrassing"
                   r"|encouraging|heartwarming|thrilling|touching|stunning|charming|rewarding|challenging|confusing"
                   r"|surprising|breathtaking|promising|soothing|calming|uplifting|humbling|nerve-wracking|wishing")
_SUBJECTLESS = [(re.compile(p, re.I), r) for p, r in [  # "Been vegan for 3 years." -> "I've been vegan ..."
    (r"^been\b", "I've been"),
    (r"^(?:love|like|hate|enjoy|prefer)\b", None),
    (r"^(?:just\s+|finally\s+)?(?:moved|relocated|started|joined|quit|got|finished|graduated|switched|passed|adopted"
     r"|bought|retired|traded|swapped|sold|replaced|upgraded|downgraded|left)\b", None),
    (r"^(?!(?:some|no|every|any)?thing|morning|evening|spring|king|ring|wing|sing|bring|sting|swing|string|ceiling"
     r"|during)(?![a-z]+ing(?:\s+[\w'-]+){0,3}?\s+(?:is|was)\s+my\s+[\w'-]+\W*$)"  # "Swimming is my thing": "my X"
     + _GERUND_PHRASE, "I find"),  # "Running is ..."
    (r"^(?:currently\s+|still\s+)?(?!(?:thinking|wondering|looking|going|doing|feeling|getting|loving|liking|enjoying"
     r"|hating|trying\s+to\s+(?:figure"
     r"|understand|find)|running\s+late|nothing|morning|evening|everything|something|" + _ING_ADJECTIVES + r")\b)"
     r"(?!" + _GERUND_PHRASE + r")[a-z]+ing\b", "I'm"),
    (r"^(?:married|single|engaged|divorced|retired|vegan|vegetarian|pescatarian)\b", "I'm"),
    (r"^(?:originally\s+)?from\s+[A-Z]", "I'm"),  # "Originally from Nairobi, now living in Toronto."
    (r"^\d{1,3}\s*,", "I'm"),
]]
_GERUND = {"living": "I live", "working": "I work", "studying": "I study", "teaching": "I teach"}
_STATES = (r"married|single|engaged|divorced|widowed|retired|vegan|vegetarian|pescatarian|pregnant|unemployed"
           r"|self-employed|freelance|remote|left-handed|right-handed|colou?r-?blind|diabetic|bilingual|trilingual")
_NOUN = (r"student|engineer|developer|dev|programmer|designer|manager|nurse|doctor|teacher|scientist|analyst|lawyer"
         r"|writer|consultant|researcher|architect|accountant|founder|freelancer|cto|ceo|cfo|coo|vp|director|intern"
         r"|professor|lecturer|chef|pilot|artist|musician|photographer|illustrator|editor|journalist|pharmacist"
         r"|therapist|dentist|mechanic|electrician|plumber|farmer|owner|lead|head|officer|assistant|specialist"
         r"|technician|administrator|admin|sre|pm|candidate|postdoc|resident|surgeon|paramedic|firefighter|soldier")
_KIN = (r"kids?|children|sons?|daughters?|dogs?|cats?|puppy|puppies|kittens?|pets?|grandchildren|grandkids|boys|girls"
        r"|babies|teens|teenagers|twins")
_NOT_NAME = frozenset("""back fine good great ok okay here sorry sure done ready new tired hungry bored busy free home glad
happy sad excited curious confused lost stuck late early also still just not so very really currently originally now
going trying looking working living studying based from in at on a an the into over out off up down doing feeling
thinking learning using interested afraid aware alone well cool bad in this that there what all into getting about
only almost always never sometimes usually anyone someone everyone nobody nothing same me you""".split())
_NATIONALITY = (r"american|british|english|scottish|irish|welsh|canadian|australian|german|french|spanish|portuguese"
                r"|italian|dutch|belgian|swiss|austrian|polish|czech|swedish|norwegian|danish|finnish|greek|turkish"
                r"|russian|ukrainian|brazilian|mexican|argentin(?:e|ian)|chilean|colombian|peruvian|indian|pakistani"
                r"|chinese|japanese|korean|vietnamese|thai|filipino|indonesian|nigerian|kenyan|south\s+african"
                r"|egyptian|moroccan|israeli|iranian|lebanese")
_INTRO = re.compile(r"^I(?:'m|\s+am)\s+(?i:(?:dr|mr|mrs|ms|prof)\.?\s+)?(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?"
                    r"|[a-z][\w'-]*)(?P<pronouns>\s*\(\s*(?:she|he|they|xe|ze)/\w+\s*\))?(?=\s*(?:[,.;!(]|$|\s+(?:and"
                    r"|from)\b|\s+[-–—]))(?P<rest>.*)$")
_HERE = re.compile(r"^(?P<name>[A-Z][\w'-]*|[a-z][\w'-]*)\s+here\b\s*[,.!:;-]*\s*(?P<rest>.*)$")
_JOB_AT_IN = re.compile(r"^(I'm\s+an?\s+.+?\s+(?:at|for)\s+[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*)\s+in\s+"
                        r"(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)$")
_JOB_BASED = re.compile(r"^(I'm\s+an?\s+.+?)\s+based\s+in\s+(?P<place>.+)$")
_JOB_DOING = re.compile(r"^(I'm\s+an?\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+(?!(?:during|morning|evening|thing|something"
                        r"|nothing|everything|king|ring|spring|string)\b)(?P<verb>[a-z]+ing)\b\s+(?P<rest>.+)$")


def sentences(text: str) -> list[str]:
    """`text` cut into sentences, with quoted speech of others left out."""
    text = re.sub(r"[^\S\n]+", " ", text)  # one space: no pattern below meets a long run of blanks
    for pattern in _QUOTED:
        text = pattern.sub(" .", text)
    for pattern, replacement in _SPELLING:
        text = pattern.sub(replacement, text)
    return [s for s in (s.strip() for s in _SENTENCE.split(text)) if s]


# "Last year I moved to Oslo", "Two years ago, I quit smoking", "In 2019 I graduated from Yale": the time said first is
# read where the rules read it, after the clause it dates ("I moved to Oslo last year"). "Today" and "tonight" stay where
# they are (a lasting change said the day it happened is told apart from a passing one there: heuristics).
_UNIT = r"(?:days?|weeks?|months?|years?)"
_NAMED_TIME = (r"(?:week|month|year|summer|winter|spring|autumn|fall|weekend|monday|tuesday|wednesday|thursday|friday"
               r"|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november"
               r"|december)")
_TIME_LEAD = re.compile(
    r"^(?P<when>(?:(?:just\s+)?(?:last|this\s+past)\s+" + _NAMED_TIME + r"|(?:back\s+)?in\s+(?:(?:early|late|mid)\s+)?"
    r"(?:\d{4}|" + _NAMED_TIME + r")(?:\s+\d{4})?|(?:about\s+)?(?:a|an|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|a\s+few|a\s+couple\s+of|several|\d{1,3})\s+" + _UNIT + r"\s+ago|yesterday|recently|a\s+while\s+ago"
    r"|earlier\s+this\s+(?:week|month|year))(?:\s+\([^()]{1,40}\))?)\s*,?\s+(?=(?:i|i'm|i've|my|we|we're|we've)\b)",
    re.I)
_FIRST_CLAUSE_END = re.compile(r",|;|\s+(?:and|but|so)\s+")


def time_after(sentence: str) -> str:
    """`sentence` with an opening time ("Last year, ...") put after its first clause, or as it is."""
    match = _TIME_LEAD.match(sentence)
    if match is None:
        return sentence
    when, rest = match.group("when"), sentence[match.end():]
    when = when[0].lower() + when[1:]
    cut = _FIRST_CLAUSE_END.search(rest)
    at = cut.start() if cut else len(rest.rstrip(".!… "))
    return f"{rest[:at]} {when}{rest[at:]}"


def strip_leads(text: str) -> tuple[str, bool]:
    """`text` without its opening words ("Hi! Oh, well, actually, ..."), and whether they said it is a correction."""
    cue = False
    while True:
        before = text
        text = _PREAMBLE.sub("", _LEAD.sub("", _GREETING.sub("", text).strip()).strip()).strip()
        head = _HEAD.match(text)
        if head and not re.search(r"\b(?:my|me)\b", head.group("head"), re.I):
            cue = cue or bool(_CUE_WORDS.search(head.group("head")))
            text = text[head.end():]
        stripped = _CUE_LEAD.sub("", text).strip()
        cue = cue or stripped != text
        text = stripped
        if text == before:
            return text, cue


def _item(part: str) -> str | None:
    """One item of "I'm 41, married, with three kids" as a clause: '41' -> "I'm 41"; None when it is not an item."""
    part = re.sub(r"^(?:recently|happily|newly|currently|still|also|now|just)\s+", "", part.strip(), flags=re.I)
    if re.match(r"^\d{1,3}$", part):
        return f"I'm {part}"
    if re.match(r"^(?:I|my)\b", part):
        return part
    if re.match(rf"^(?:with\s+)?(?:a|an|one|two|three|four|five|six|\d+)\s+(?:[\w-]+\s+)?(?:{_KIN})\b", part, re.I):
        return "I have " + re.sub(r"^with\s+", "", part, flags=re.I)
    if re.match(r"^with\b", part, re.I):
        return None
    if re.match(r"^(?:father|mother|mum|mom|dad|parent|grandparent)\s+of\b", part, re.I):
        return f"I'm a {part}"
    if re.match(rf"^{_VERB}\b", part, re.I):
        return f"I {part}"
    gerund = re.match(r"^(living|working|studying|teaching)\b", part, re.I)
    if gerund:
        return _GERUND[gerund.group(1).lower()] + part[gerund.end():]
    if re.match(rf"^(?:a|an|the|based|originally|from|{_STATES}|[a-z]+ing)\b", part, re.I):
        return f"I'm {part}"
    if re.search(rf"\b(?:{_NOUN})s?\b", part, re.I) and len(part.split()) <= 12:
        return f"I'm {'an' if part[0].lower() in 'aeiou' else 'a'} {part}"
    return None


def _expand_list(clause: str) -> list[str]:
    """ "I'm 41, married, with three kids" -> ["I'm 41", "I'm married", "I have three kids"]; items that are not
    list items stay with the one before ("I speak Portuguese, English and some French")."""
    if not re.match(r"^I(?:'m|\s+am)\b", clause):
        return [clause]
    head, *parts = re.split(r"\s*,\s*(?:and\s+)?", clause)
    out = [head]
    for part in parts:
        item = _item(part)
        if item is None:
            out[-1] = f"{out[-1]}, {part}"
        else:
            out.append(item)
    return out


def _split_job(clause: str) -> list[str]:
    """ "I'm a backend engineer at Acme in Lisbon" -> ["I'm a backend engineer at Acme", "I live in Lisbon"];
    "I'm a nurse working nights" -> ["I'm a nurse", "I'm working nights"]."""
    match = _JOB_AT_IN.match(clause)
    if match:
        return [match.group(1), f"I live in {match.group('place')}"]
    match = _JOB_BASED.match(clause)
    if match:
        return [*_split_job(match.group(1)), f"I'm based in {match.group('place')}"]
    match = _JOB_DOING.match(clause)
    if match:
        return [match.group(1), f"I'm {match.group('verb')} {match.group('rest')}"]
    return [clause]


# "Call me Bea", and a name or a home said in Portuguese, Spanish, German, French, Italian or Dutch: written as the
# English clauses the rules read ("my name is Bea", "I live in Lyon"); the rest of such a sentence is not read.
_NAME_WORD = r"(?P<name>[A-ZÀ-Ý][\w'-]*(?:\s+[A-ZÀ-Ý][\w'-]*)?)"
# "Please call me Tom", "My friends call me Sasha", "Everyone at work calls me Jojo": a name, not a request (read
# before requests are left out); "Call me when you're done" and "My friends call me every Sunday" name nobody.
_CALL_ME = re.compile(r"^(?i:(?:please|just|you\s+can|feel\s+free\s+to)\s+)?(?i:call\s+me"
                      r"|(?:my\s+(?:friends|family|colleagues|kids|students|parents)|most\s+people|people|everyone"
                      r"|everybody|they)(?:\s+(?:at|in)\s+(?:work|school|the\s+office|home))?\s+(?:usually\s+)?calls?"
                      r"\s+me)\s+" + _NAME_WORD
                      + r"(?=\s*(?:[,.!;]|$|\s+(?i:please|everyone|everybody|for\s+short|instead)))")
_FOREIGN_NAME = re.compile(r"(?:^|\b)(?i:je\s+m'appelle|ich\s+hei(?:ß|ss)e|mein\s+name\s+ist|me\s+llamo"
                           r"|mi\s+nombre\s+es|meu\s+nome\s+é|me\s+chamo|chamo-me|mi\s+chiamo|ik\s+heet"
                           r"|mijn\s+naam\s+is)\s+" + _NAME_WORD)
_FOREIGN_HOME = re.compile(r"(?:^|\b)(?i:j'habite\s+(?:maintenant\s+|désormais\s+)?(?:à|a|en)|je\s+vis\s+(?:à|a|en)|ich\s+(?:wohne|lebe)\s+"
                           r"(?:jetzt\s+|nun\s+|inzwischen\s+|mittlerweile\s+)?in"
                           r"|vivo\s+en"
                           r"|moro\s+em|moro\s+no|moro\s+na|vivo\s+em|abito\s+a|vivo\s+a|ik\s+woon\s+in)\s+"
                           + _NAME_WORD.replace("name", "place"))
# "My cat Miso ...", "our dog Rex ...": the pet's name (what the sentence goes on to say of the pet is not read).
_PET_NAMED = re.compile(r"^(?i:my|our)\s+(?P<pet>(?i:cat|dog|puppy|kitten|rabbit|bunny|hamster|parrot|horse|pony"
                        r"|tortoise|turtle|guinea\s+pig|ferret|lizard|snake|goldfish|budgie))\s+"
                        r"(?P<name>(?!I\b)[A-Z][\w'-]*)\b(?!')")

# "My partner Sam and I ...": one of the user's people named beside the user.
_WITH_NAMED = re.compile(r"^(?i:my)\s+(?P<who>(?i:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|son|daughter"
                         r"|sister|brother|mom|mum|mother|dad|father|friend|roommate|flatmate|cousin))\s+"
                         r"(?P<name>(?!I\b)[A-Z][\w'-]*)\s+(?i:and)\s+(?P<rest>I\b.*)$")


def _named_clauses(sentence: str) -> list[str] | None:
    """The clauses of a sentence that names the user in a way the English rules do not read, or None."""
    pet = _PET_NAMED.match(sentence)
    if pet:
        return [f"my {pet.group('pet').lower()}'s name is {pet.group('name')}"]
    together = _WITH_NAMED.match(sentence)
    if together:  # "My partner Sam and I live in Leeds": who Sam is, and what they both do
        return [f"my {together.group('who').lower()} is {together.group('name')}", *_clauses_of(together.group("rest"))]
    name, home = _FOREIGN_NAME.search(sentence), _FOREIGN_HOME.search(sentence)
    if name is None and home is None:
        return foreign_clauses(sentence) or job_clauses(sentence)
    return ([f"my name is {name.group('name')}"] if name else []) \
        + ([f"I live in {home.group('place')}"] if home else [])


def _introduction(sentence: str, greeted: bool) -> list[str] | None:
    """ "I'm Ana, a backend engineer" -> ["my name is Ana", "I'm a backend engineer"]; None when the sentence does
    not give the user's name. A lower-case name, or "Omar here", counts only in a message that opened with a
    greeting."""
    match = _INTRO.match(sentence) or (_HERE.match(sentence) if greeted else None)
    if not match:
        return None
    name = match.group("name")
    first = name.split()[0].lower()
    if first in _NOT_NAME or re.fullmatch(rf"(?:{_NATIONALITY}|{_STATES})", name, re.I) \
            or (name[0].islower() and not greeted) or re.search(r"(?:ed|ing|ly|ful|ous|ive|able|ic)$", first):
        return None
    out = [f"my name is {name}"]
    if match.groupdict().get("pronouns"):
        out.append(f"I use {match.group('pronouns').strip(' ()')} pronouns")
    rest = match.group("rest").strip()
    joiner = " " if re.match(r"^and\b", rest) else ", "
    rest = re.sub(r"^[\s,.;!:–—-]+", "", rest).strip()
    if rest:  # what follows the name reads as the rest of "I'm <name>, ..."
        out.extend(c for c in _clauses_of(f"I'm \x00{joiner}{rest}") if "\x00" not in c)
    return out


def _clauses_of(sentence: str) -> list[str]:
    """The first-person clauses of one sentence, each on its own."""
    out: list[str] = []
    for clause in _CLAUSE.split(sentence):
        clause = clause.strip()
        if not clause:
            continue
        pieces = _CONTINUATION.split(clause) if re.match(r"^I\b", clause) else [clause]
        for n, piece in enumerate(pieces):
            piece = piece.strip()
            if n and not re.match(r"^I\b", piece):
                piece = re.sub(r"^(?:now|also|just|recently|currently)\s+", "", piece, flags=re.I)
                piece = f"I {piece}"
            piece = re.sub(r",\s+not\s+[\w' .-]{1,30}$|\s*\(not\s+[^)]{1,30}\)$|,\s+(?:it|which|this|that)\s+(?:is|was"
                           r"|takes|took|has|makes|means)\b.*$", "", piece)
            for item in _expand_list(piece):
                out.extend(_split_job(item))
    return out


def _inverted_after_lead(sentence: str) -> tuple[str, str] | None:
    """(the clause before, the rest) where the user's thing is named first after a clause of its own ("I changed
    dentists, Dr. Patel is my dentist now"), so that each is read as a sentence; else None."""
    head, comma, rest = sentence.rstrip(".!… ").partition(", ")
    inverted = _INVERTED.match(rest) if comma and 2 <= len(head) <= 80 else None
    return (head, rest) if inverted and inverted.group("value")[0].isupper() else None


# "Mostly I code in Go", "Usually I cycle to work": the adverb goes after "I", where the rules read it.
_ADVERB_FIRST = re.compile(r"^(?P<adverb>mostly|usually|generally|normally|typically|often|sometimes|mainly|primarily"
                           r"|occasionally|rarely|always|never)\s*,?\s+(?=I\b(?!'))", re.I)


def _subjectless(sentence: str) -> str:
    """ "Been vegan for 3 years." -> "I've been vegan for 3 years."; "Mostly I code in Go" -> "I mostly code in Go";
    other sentences as they are."""
    adverb = _ADVERB_FIRST.match(sentence)
    if adverb:
        rest = re.sub(r"^I\s*", "", sentence[adverb.end():])
        return f"I {adverb.group('adverb').lower()} {rest}"
    if re.match(r"^(?:I|my|we)\b", sentence, re.I):
        return sentence
    for pattern, subject in _SUBJECTLESS:
        if pattern.match(sentence):
            rest = sentence[0].lower() + sentence[1:]
            if subject == "I've been":
                return "I've " + rest
            return f"{subject} {rest}" if subject else f"I {rest}"
    return sentence


def _contrasted(clause: str, sentence: str) -> bool:
    """Whether the sentence says the clause against what it is not: "my dog's name is Max, not Rex"."""
    return bool(re.search(re.escape(clause) + r"\s*(?:,\s*not\s|\(not\s)", sentence))


def first_person_clauses(text: str) -> list[tuple[str, bool]]:
    """The clauses of `text` in which the user says something about themselves, in order, each with whether it was
    said as a correction ("Actually, ..."). Questions, hypotheses, requests and others' quoted words are left out."""
    greeted = bool(_GREETING.match(text.strip()))
    found: list[tuple[str, bool]] = []
    for sentence in (part for whole in sentences(text)
                     for part in (change_after_lead(whole) or _inverted_after_lead(whole) or (whole,))):
        if len(sentence) > MAX_SENTENCE:  # a page of text without a full stop states no fact about the user
            continue
        sentence, cue = strip_leads(sentence.strip("\"' "))
        sentence = time_after(sentence)
        call = _CALL_ME.match(sentence)
        if call:  # "Please call me Tom": a name, where "please" would make it a request
            found.append((f"my name is {call.group('name')}", cue))
            continue
        if not sentence or _QUESTION.match(sentence) or _HYPOTHETICAL.match(sentence):
            continue
        sentence = _CUT.sub("", sentence).strip()
        if sentence.endswith("?"):
            continue
        sentence = _FILLER_TAIL.sub("", sentence.rstrip(".!… ")).strip()
        sentence = re.sub(r"^name\s+is\b", "my name is", _WE_ARE.sub("I'm ", _WE.sub("I ", sentence)), flags=re.I)
        sentence = _subjectless(sentence)
        sentence, changed = restate(sentence)  # "My new manager is Rui" -> "my manager is Rui", a change
        cue = cue or changed
        inverted = _INVERTED.match(sentence)
        if inverted and inverted.group("value")[0].isupper():
            sentence = f"my {inverted.group('what')} is {inverted.group('value')}{inverted.group('tail') or ''}"
            cue = cue or bool(inverted.group("not"))
        parts = [sentence]
        for pattern, prefix, then in ((_SO_NOW, "", "I "), (_SUBORDINATE, "", ""), (_AS_A, "I'm ", "")):
            match = pattern.match(sentence)
            if match:  # "..., so now we have two cats": the second part is said as "I have two cats"
                second = _HAVE_COUNT.sub("I have ", match.group(2)) if pattern is _SO_NOW else match.group(2)
                parts = [prefix + match.group(1), _WE.sub(then, second) if then else second]
                break
        for n, part in enumerate(parts):
            intro = _introduction(part, greeted)
            if intro is None:
                intro = _named_clauses(part)
            clauses = intro if intro is not None else _clauses_of(part)
            found.extend((clause, (cue and n == 0 and i == 0) or _contrasted(clause, part))
                         for i, clause in enumerate(clauses))
    return found
