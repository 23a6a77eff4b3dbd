"""The offline extractor: the user's English first-person statements, as third-person facts, by rules.

No LLM. A table of rules turns "I moved to Porto last month" into "User moved to Porto" with a category and an
honest confidence; statements.py says what each statement is about, so that a correction supersedes the stored
fact or the earlier statement it contradicts. The same rewriting reads the daily logs for the offline Deep Dream
(tiers/offline_dream.py)."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Any, Mapping, Sequence

from memory_core.extraction.candidates import Candidate, ExtractionReply
from memory_core.extraction.offline.fact_summaries import fact_summaries
from memory_core.extraction.offline.statements import Statement, describe, supersedes, third_person_verb
from memory_core.extraction.offline.utterances import first_person_clauses, strip_leads as _strip_leads
from memory_core.text.words import STOPWORDS, stem, words

# (pattern on a first-person clause, category, confidence, template): the template writes the fact from `rest`;
# None: `rest` is itself a first-person clause, put in the third person. The first rule that matches wins.
_RULES: list[tuple[re.Pattern[str], str, float, str | None]] = [(re.compile(p, re.I), c, f, t) for p, c, f, t in [
    (r"^my\s+name\s+is\s+(?P<rest>.+)$", "context", 0.95, "User's name is {rest}"),
    (r"^my\s+favou?rite\s+(?P<rest>.+)$", "preference", 0.85, "User's favorite {rest}"),
    (r"^my\s+goal\s+is\s+(?P<rest>.+)$", "goal", 0.85, "User's goal is {rest}"),
    (r"^my\s+(?P<rest>(?:job|team|company|age|work|employer|startup|business)\b.+)$", "context", 0.8, "User's {rest}"),
    (r"^my\s+(?P<rest>(?:go-to|preferred|usual)\s+.+)$", "preference", 0.8, "User's {rest}"),
    # "My blog runs on WordPress", "My site is hosted on Netlify": what the user's own things are made with
    (r"^my\s+(?P<rest>(?:[\w'-]+\s+){0,2}?(?:blog|site|website|web\s+site|app|server|shop|store|newsletter|podcast"
     r"|laptop|computer|pc|phone|home\s+server|homelab|nas)\s+(?:runs\s+on|is\s+(?:built|hosted|written|made)\s+(?:on|in|with)"
     r"|uses)\s+.+)$", "context", 0.8, "User's {rest}"),
    (r"^my\s+(?P<rest>(?:(?:main|native|first|second|mother)\s+language|(?:tech\s+)?stack|editor|os|ide)\b.+)$",
     "knowledge", 0.8, "User's {rest}"),
    # "My X is Y" about the user's own things; what the user's people are or do is theirs, not the user's (_RELATION)
    (r"^my\s+(?P<rest>(?!(?:code|question|problem|issue|internet|wifi|connection|answer|point|day|guess|head|mistake"
     r"|fault|turn|bad|apologies|pleasure|plan\s+for\s+today)\b)(?:[\w'-]+\s+){0,4}?[\w'$-]+\s+(?:is|are|was)\s+.+)$",
     "context", 0.8, "User's {rest}"),
    (r"^(?P<rest>i\s+(?:really\s+|absolutely\s+|also\s+|still\s+|do\s+not\s+|don't\s+)?"
     r"(?:like|love|enjoy|prefer|hate|dislike|adore|can't\s+stand|avoid)\b.+)$", "preference", 0.8, None),
    (r"^(?P<rest>i(?:'ve|\s+have)?\s+switched\s+to\b.+)$", "preference", 0.8, None),
    (r"^(?P<rest>i\s+find\b.+)$", "preference", 0.7, None),
    (r"^(?P<rest>i\s+(?:usually|always|often|never|tend\s+to|normally|typically)\b.+)$", "behavior", 0.75, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:planning|trying|hoping|going)\s+to\b.+)$", "goal", 0.75, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:saving|training|studying|preparing)\s+(?:up\s+)?for\b.+)$", "goal", 0.75, None),
    (r"^(?P<rest>i(?:\s+(?:want|plan|hope|intend|aim|need|would\s+(?:like|love))|'d\s+(?:like|love))\s+to\b.+)$",
     "goal", 0.75, None),
    (r"^(?P<rest>i\s+(?:train|exercise|work\s+out|cook|swim|surf|cycle|bike|walk|commute|meditate|smoke|drink|eat"
     r"|wake\s+up|get\s+up|go|sleep|spend|hike|climb|ski|bake|paint|draw|dance|sing|knit|garden|grow)\b.+)$",
     "behavior", 0.7, None),
    (r"^(?P<rest>i\s+(?:work|live|moved|relocated|grew\s+up|study|teach|volunteer|manage|lead|earn|weigh)\b.+)$",
     "context", 0.85, None),
    (r"^(?P<rest>i(?:'ve|\s+have)?\s+(?:quit|stopped|left|changed|started|began|switched|moved\s+on|upgraded"
     r"|downgraded)\b.+)$", "context", 0.8, None),
    (r"^(?P<rest>i\s+(?:was\s+born|got\s+(?:married|engaged|divorced|promoted|hired|a\s+(?:new\s+)?job|the\s+job"
     r"|accepted|into|back\s+from|a\s+(?:dog|cat|puppy|kitten))|joined|passed|graduated|finished|completed|retired|adopted"
     r"|bought|founded|launched|won|became)\b.*)$", "context", 0.8, None),
    (r"^(?P<rest>i(?:'ve|\s+have)\s+(?!been\s+(?:one|it|that|this|there|here|so)\b)(?:been|worked|lived|used|studied"
     r"|played|taught|known|owned|run|done|practi[cs]ed"
     r"|coded|programmed|written|coached|volunteered|managed|led|mentored)\b.+)$", "context", 0.8, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+not\s+(?:a|an|really\s+a|big\s+on|into|much\s+of\s+a|great\s+at|good\s+at|fond"
     r"|comfortable)\b.+)$", "behavior", 0.75, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+not\s+(?:allergic|intolerant|lactose\s+intolerant|gluten\s+intolerant|diabetic"
     r"|vegan|vegetarian|pregnant|married|engaged|religious)\b.*)$", "context", 0.8, None),
    (r"^(?P<rest>i\s+(?:do\s+not|don't|never)\s+(?:eat|drink|smoke)\b.+)$", "preference", 0.75, None),
    (r"^(?P<rest>i\s+(?:do\s+not|don't)\s+(?:have|own|drive|use|speak|watch|play|cook|fly|work)\b.+)$", "context",
     0.75, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:originally\s+|also\s+|still\s+)?(?:a|an|the|from|based|currently|working|studying"
     r"|living|at|in|married|on\s+an?)\b.+)$", "context", 0.8, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+\d{1,3}\b(?:\s+years\s+old)?)$", "context", 0.85, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:now\s+)?with\s+(?-i:[A-Z]{2,})[\w&.-]*\b.*)$", "context", 0.8, None),  # KPMG
    (r"^i\s+(?:just\s+)?turned\s+(?P<rest>\d{1,3})(?:\s+years\s+old)?$", "context", 0.85, "User is {rest}"),
    (r"^(?P<rest>i(?:'m|\s+am)\s+\d'\s?\d{1,2}\b.*)$", "context", 0.8, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:(?:fully|strictly|completely|totally|mostly)\s+)?(?:vegan|vegetarian|pescatarian"
     r"|single|engaged|married|widowed|divorced|retired|self-employed"
     r"|unemployed|allergic|left-handed|right-handed|colou?r-?blind|lactose\s+intolerant|gluten\s+intolerant"
     r"|(?:type\s+[12]\s+)?diabetic|asthmatic|epileptic|c(?:o)?eliac|pregnant|deaf|blind|dyslexic|autistic"
     r"|introverted|extroverted|bilingual|trilingual|fluent"
     r"|american|british|english|scottish|irish|canadian|australian|german|french|spanish|portuguese|italian|dutch"
     r"|polish|swedish|norwegian|danish|greek|turkish|russian|ukrainian|brazilian|mexican|indian|chinese|japanese"
     r"|korean|nigerian|kenyan)\b.*)$", "context", 0.8, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?!(?:going|feeling|thinking|wondering|looking|trying|getting|doing|not|just)\b)"
     r"\w+ing\b.+)$", "context", 0.75, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:(?:really|very|pretty|quite|so|fairly)\s+)?(?:good|bad|terrible|great|awful"
     r"|decent|hopeless|useless|fluent|new|experienced|proficient|comfortable|confident)\s+(?:at|in|with|to)\b.+)$",
     "knowledge", 0.75, None),
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:due|expecting)\b.+)$", "context", 0.8, None),
    # a fear the user has ("I'm terrified of flying"); "I'm terrified this meeting will run late" is a passing worry
    (r"^(?P<rest>i(?:'m|\s+am)\s+(?:(?:really|very|so|deeply)\s+)?(?:afraid|scared|terrified|frightened)\s+of\b.+)$",
     "context", 0.75, None),
    (r"^(?P<rest>i(?:'ll|\s+will)\s+be\s+\d{1,3}\b.*)$", "context", 0.8, None),
    (r"^(?P<rest>i\s+(?:can't|cannot|can\s+not)\s+(?:eat|drink|have|tolerate|digest|drive|swim)\b.+)$", "context",
     0.8, None),
    (r"^(?P<rest>i\s+(?:suffer|struggle|deal)\s+(?:from|with)\b.+)$", "context", 0.8, None),
    (r"^(?P<rest>i\s+(?:use|know|speak|have|own|play|run|write|read|code|program)\b.+)$", "knowledge", 0.7, None),
    (r"^(?P<rest>i\s+(?:drive|ride)\s+(?:an?|the|my)\s+.+)$", "context", 0.7, None),
]]
# "My manager is Rui", "my dog's name is Pixel": who the user's people are; "My mom is a teacher" is the mom's fact.
_RELATION = re.compile(r"^(?i:my)\s+(?P<who>(?i:wife|husband|partner|girlfriend|boyfriend|spouse|fianc[eé]e?|son"
                       r"|daughter|kid|child|sister|brother|mom|mum|mother|dad|father|boss|manager|friend|colleague"
                       r"|co-?worker|doctor|therapist|dentist|landlord|roommate|flatmate|teacher|tutor|coach|mentor"
                       r"|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|niece|nephew|neighbou?r|dog|cat"
                       r"|puppy|kitten|pet|baby|lead|team\s+lead|tech\s+lead|cto|ceo|advisor|supervisor)s?)\b"
                       r"(?P<rest>(?:'s|\s+(?:(?i:is|are|was|were|and|has|had|have|will|can|just|also|never|always|still"
                       r"|recently)|\w+s|\w+ed|[A-Z]\w*))\b.*|)$")
_NAMED = re.compile(r"^(?P<how>(?:'s\s+name|\s+name)?\s+(?i:is|'s)\s+(?:(?i:called|named)\s+)?)"
                    r"(?P<name>(?:(?i:dr|mr|mrs|ms|prof)\.?\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\b"
                    r"|^(?P<how2>\s+(?i:is|'s)\s+(?i:called|named)\s+)(?P<name2>[\w'-]+)")
# Things said in passing that are not lasting facts about the user.
_NOT_A_FACT = re.compile(r"^i\s+(?:really\s+|just\s+|absolutely\s+)?(?:like|love|hate|enjoy|prefer|adore)\s+(?:this|that|it"
                         r"|these|those|them|you|your|the\s+(?:idea|answer|first|second|last|new|other|way\s+you))\b"
                         r"|^i\s+have\s+(?:a|an|one|another|some|no|two|a\s+few)\s+(?:quick\s+|small\s+|follow-up\s+)?"
                         r"(?:questions?|idea|problem|issue|doubt|request|headache|cold|fever|meeting|thought|suggestion"
                         r"|clue)\b|^i(?:'m|\s+am)\s+going\s+to\s+(?:bed|sleep|try|check|think|ask|grab|head|take\s+a)\b"
                         r"|^i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+(?:know|ask|see|understand|check|find\s+out"
                         r"|figure\s+out|make\s+sure|clarify|confirm|be\s+sure)\b"
                         r"|\b(?:today|tonight|tomorrow|this\s+(?:morning|afternoon|evening))\b", re.I)
_HEDGE = re.compile(r"\b(maybe|perhaps|probably|i think|i guess|might|kind of|sort of|not sure)\b", re.I)
# Words that say a statement corrects or changes something said before.
CORRECTION_CUES = re.compile(r"\b(?:actually|correction|i\s+meant|no\s+longer|any\s*more|any\s+longer|now|these\s+days"
                             r"|nowadays|(?:moved|relocated)\s+to|changed\s+jobs|switched\s+to|quit|stopped|used\s+to"
                             r"|no\s+more|(?:switched|moved|changed|went|migrated)\s+from"
                             r"|(?:switched|moved|changed|went)\s+over\s+to|migrated\s+to|moved\s+on"
                             r"|(?:upgraded|downgraded)\s+(?:from|to))\b", re.I)
# "also", "too", "another": one more, beside what is known, not instead of it.
_ADDS = re.compile(r"\b(?:also|too|as\s+well|another|second|other|either)\b", re.I)
_USED_TO = re.compile(r"^(?P<i>i)\s+used\s+to\s+(?P<be>be\s+)?(?P<rest>.+)$", re.I)
_NO_LONGER = re.compile(r"^(?P<i>i(?:'m|\s+am)?)\s+no\s+longer\s+(?P<rest>.+)$", re.I)
_NOT_ANYMORE = re.compile(r"^(?P<i>i(?:'m|\s+am)?)\s+(?:not|don't|do\s+not)\s+(?P<rest>.+?)[,\s]+"
                          r"(?:anymore|any\s+more|any\s+longer)\b(?P<tail>.*)$", re.I)
# When something was said ("now", "last month", ", I moved two weeks ago") is not part of the fact.
_TEMPORAL = [re.compile(p, re.I) for p in (
    r"^(?:right\s+now|now|these\s+days|nowadays|lately|currently|at\s+the\s+moment),?\s+",
    r",?\s+(?:right\s+now|now|these\s+days|nowadays|lately|at\s+the\s+moment|anymore|any\s+more|any\s+longer|again)$",
    r",?\s+(?:since\s+)?(?:last|this)\s+(?:week|month|year|summer|winter|spring|autumn|fall|weekend)$",
    r",?\s+(?:about\s+|around\s+)?(?:a|an|one|two|three|four|a\s+few|few|several|\d+)\s+(?:days?|weeks?|months?"
    r"|years?)\s+ago$",
    r",?\s+(?:recently|yesterday|a\s+while\s+ago|earlier\s+this\s+(?:week|month|year))$",
    r",?\s+(?:actually|in\s+fact|by\s+the\s+way|btw|as\s+i\s+said|as\s+i\s+told\s+you|then|after\s+all)$",
)]
_TEMPORAL_AFTER_I = re.compile(r"^(i(?:'m|\s+am|'ve|\s+have)?)\s+(?:now|currently|recently|finally|just|already"
                               r"|officially|actually)\s+", re.I)


def _pronouns(text: str) -> str:
    """The user's other first-person words in the third person: 'my team' -> 'their team'."""
    text = re.sub(r"\b(?:my|our)\b", "their", text, flags=re.I)
    text = re.sub(r"\bmine\b", "theirs", text, flags=re.I)
    text = re.sub(r"\bmyself\b", "themselves", text, flags=re.I)
    text = re.sub(r"\bI(?:'m| am)\b", "they are", text)
    text = re.sub(r"\bI was\b", "they were", text)
    text = re.sub(r"\bI\b", "they", text)
    return re.sub(r"\bme\b", "them", text)


def _third_person(clause: str) -> str:
    """'I love hiking' -> 'User loves hiking'; 'I'm a nurse' -> 'User is a nurse'; 'I quit my job' -> 'User quit
    their job'."""
    clause = re.sub(r"^i(?:'m|\s+am)\b", "User is", clause, flags=re.I)
    clause = re.sub(r"^i(?:'ve|\s+have)\b(?=\s+\w+(?:ed|en)\b|\s+(?:quit|left|got|been|switched|moved|had|run|done|known|taught|grown|seen|made)\b)",
                    "User has", clause, flags=re.I)
    clause = re.sub(r"^i\s+(?:do\s+not|don't)\b", "User does not", clause, flags=re.I)
    clause = re.sub(r"^i\s+(?:did\s+not|didn't)\b", "User did not", clause, flags=re.I)
    clause = re.sub(r"^i(?:'d|\s+would)\b", "User would", clause, flags=re.I)
    clause = re.sub(r"^i(?:'ll|\s+will)\b", "User will", clause, flags=re.I)
    match = re.match(r"^i\s+((?:(?:really|absolutely|usually|always|often|never|normally|typically|also|still|just|even"
                     r"|totally|truly|definitely|honestly|genuinely|personally|sometimes|rarely|mostly|seriously"
                     r"|actually|basically|generally|occasionally|regularly|currently|finally|recently|now)\s+)*)"
                     r"([\w'-]+)\b", clause, flags=re.I)
    if match:
        adverb = (match.group(1) or "").lower()
        clause = f"User {adverb}{third_person_verb(match.group(2))}" + clause[match.end():]
    return _pronouns(clause)


def _drop_negation(clause: str) -> tuple[str, bool]:
    """'I don't live in Lisbon anymore' -> ('I live in Lisbon', True): a statement that something stopped."""
    match = _NO_LONGER.match(clause)
    if match:
        return f"{match.group('i')} {match.group('rest')}", True
    match = _NOT_ANYMORE.match(clause)
    if match:
        return f"{match.group('i')} {match.group('rest')}{match.group('tail')}".strip(), True
    match = _USED_TO.match(clause)  # "I used to drink coffee": no longer so
    if match:
        return ("I'm " if match.group("be") else "I ") + match.group("rest"), True
    return clause, False


def _drop_temporal(clause: str) -> str:
    clause = " ".join(clause.split())  # the patterns below are quadratic in a run of blanks
    clause = _TEMPORAL_AFTER_I.sub(r"\1 ", clause)
    previous = None
    while previous != clause:
        previous = clause
        for pattern in _TEMPORAL:
            clause = pattern.sub("", clause).strip()
    return clause


_PASSING = re.compile(r"\b(?:right\s+now|at\s+the\s+moment)\b", re.I)
# what one is doing at the moment; living, working, studying somewhere "right now" lasts
_DOING = re.compile(r"^User is (?!(?:living|working|studying|staying|based|training|learning|teaching)\b)\w+ing\b")
# An activity said with nothing after it, once "no longer" or "anymore" is taken off: "I don't swim anymore".
_ACTIVITY_ALONE = re.compile(r"^i\s+(run|jog|swim|smoke|vape|drink|cycle|bike|drive|cook|bake|paint|draw|dance|sing|knit"
                             r"|garden|hike|climb|ski|surf|skate|fish|hunt|travel|teach|exercise|train|meditate|commute"
                             r"|volunteer|write|blog|stream|game|gamble|golf|box|row|sail|dive|ride)$", re.I)


def _negate(content: str) -> str:
    """'User lives in Lisbon' -> 'User no longer lives in Lisbon'; 'User is vegan' -> 'User is no longer vegan'."""
    match = re.match(r"^(User(?:'s [\w -]+?)? is) (.+)$", content)
    if match:
        return f"{match.group(1)} no longer {match.group(2)}"
    return re.sub(r"^User ", "User no longer ", content)


# -- statements from what the user said -----------------------------------------------------------

def _statement(clause: str, cue: bool) -> Statement | None:
    clause, lead_cue = _strip_leads(clause.strip().strip("\"'"))
    cue = cue or lead_cue
    if len(clause) < 6 or clause.endswith("?") or re.match(r"^(if|when|would|could|should|please)\b", clause, re.I):
        return None
    clause = re.sub(r",\s+not\s+[\w' .-]{1,30}$|\s*\(not\s+[^)]{1,30}\)$", "", clause.rstrip(".!").strip())
    clause, lasting = _lasting_today(clause)
    if _NOT_A_FACT.search(clause) and not lasting:
        return None
    hedged = bool(_HEDGE.search(clause))
    clause = re.sub(r"^i\s+(?:think|guess|believe)\s+(?:that\s+)?(?=(?:i|my)\b)", "", clause, flags=re.I)
    cue = cue or bool(CORRECTION_CUES.search(clause))  # "my dentist is Dr. Costa now": for people too
    relation = _RELATION.match(clause)
    if relation:
        return _relation_statement(relation.group("who"), relation.group("rest"), cue, hedged)
    clause = re.sub(r"^(?=i\b)(i)\s+(?:might|may)\s+", r"\1 ", clause, flags=re.I)
    cue = cue or bool(CORRECTION_CUES.search(clause))
    clause, negated = _drop_negation(clause)
    passing = bool(_PASSING.search(clause))
    clause = _drop_temporal(clause)
    if negated and (alone := _ACTIVITY_ALONE.match(clause)):  # "I don't swim anymore": the activity itself ended
        return describe(f"User no longer {third_person_verb(alone.group(1).lower())}", "behavior",
                        0.5 if hedged else 0.7, cue=cue, hedged=hedged)
    for pattern, category, confidence, template in _RULES:
        match = pattern.match(clause)
        if not match:
            continue
        rest = match.group("rest").strip()
        content = template.format(rest=_pronouns(rest)) if template else _third_person(rest)
        if negated:
            content = _negate(content)
        content = content[0].upper() + content[1:]
        if passing and _DOING.match(content):  # "I'm watching a movie right now": what they do at the moment
            return None
        if len(content.split()) < 3:  # "User moved", "User quit": nothing lasting left once "when" is gone
            return None
        return describe(content[:500], category, round(confidence * 0.7, 2) if hedged else confidence,
                        cue=cue, hedged=hedged, adds=bool(_ADDS.search(clause)))
    return None


_NOT_A_NAME = frozenset("i is was has and but just also never always still recently".split())
# Whose name beside them is the user's to keep: family and pets ("my friend Tom just moved" is Tom's news).
_FAMILY = re.compile(r"(?i:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[eé]e?|sons?|daughters?|kids?|child"
                     r"|baby|mom|mum|mother|dad|father|sisters?|brothers?|grandma|grandmother|grandpa|grandfather"
                     r"|dogs?|cats?|puppy|kitten|pets?)$")


# A change that lasts, announced the day it happened ("I got married today", "Today I moved to Berlin", "We adopted a
# puppy this morning"): the day said does not make it a passing thing, as "I'm tired today" is.
_TODAY_LEAD = re.compile(r"^(?:today|this\s+(?:morning|afternoon|evening)|tonight)\s*,?\s+(?=i\b)", re.I)
_TODAY = re.compile(r"\s*,?\s*\b(?:today|this\s+(?:morning|afternoon|evening)|tonight)\b", re.I)
_LASTING_EVENT = re.compile(r"^i(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)?(?:got\s+(?:married|engaged"
                            r"|divorced|promoted|hired|a\s+new\s+job|the\s+job|a\s+(?:dog|cat|puppy|kitten))|started"
                            r"|quit|joined|moved|relocated|adopted|graduated|retired|bought|sold|passed|became"
                            r"|was\s+(?:promoted|hired|diagnosed)|signed|accepted)\b", re.I)


def _lasting_today(clause: str) -> tuple[str, bool]:
    """(`clause` without an opening "Today," before a lasting change, whether it says such a change, today or not)."""
    plain = _TODAY_LEAD.sub("", clause)
    if _LASTING_EVENT.match(plain) and not re.search(r"\btomorrow\b", plain, re.I):
        return _TODAY.sub("", plain).strip(), True  # the day is the conversation's, kept with the fact
    return clause, False


def _relation_statement(who: str, rest: str, cue: bool, hedged: bool) -> Statement | None:
    """ "my manager is Rui" -> "User's manager is Rui"; None for what the user's people are, do or like."""
    named = _NAMED.match(rest)
    aged = re.match(r"^\s+(?i:is|'s)\s+(?:now\s+)?(?P<age>\d{1,3})(?:\s+years?\s+old)?(?:\s+(?:now|already))?$", rest)
    if aged:  # "my daughter is 7"
        return describe(f"User's {who.lower()} is {aged.group('age')}", "context", 0.6 if hedged else 0.85, cue=cue,
                        hedged=hedged)
    if not named:  # "My wife Fatima is a pharmacist", "my son Leo just started kindergarten": the name said beside
        beside = re.match(r"^\s+(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\b(?!['’])", rest)
        if beside and beside.group("name").casefold() not in _NOT_A_NAME and _FAMILY.match(who):
            return describe(f"User's {who.lower()} is {beside.group('name')}", "context", 0.6 if hedged else 0.85,
                            cue=cue, hedged=hedged)
        return None
    how = " ".join((named.group("how") or named.group("how2")).lower().replace("'s", " 's").split())
    name = named.group("name") or named.group("name2")
    if "name" in how:
        content = f"User's {who.lower()}'s name is {name}"
    else:
        content = f"User's {who.lower()} is {'called ' if 'called' in how else 'named ' if 'named' in how else ''}{name}"
    return describe(content, "context", 0.6 if hedged else 0.85, cue=cue, hedged=hedged)


def heuristic_statements(text: str, *, general: bool = False) -> list[Statement]:
    """The first-person English statements in `text`, in the third person, in order. `general`: a plain first-person
    clause that no rule knows ("I studied physics at Oxford") counts too, with a lower confidence."""
    found: list[Statement] = []
    for clause, cue in first_person_clauses(text):
        statement = _statement(clause, cue)
        if statement is None and general:
            statement = _general_statement(clause, cue)
        if statement is not None:
            found.append(statement)
    return found


# A plain clause about the conversation rather than the user: "I forgot what I wanted", "I appreciate it".
_TALK = re.compile(r"^i\s+(?:just\s+|really\s+|also\s+|totally\s+)?(?:thought|felt|saw|meant|forgot|forget|remember"
                   r"|appreciate|understand|asked|ask|said|say|told|tell|tried|try|need|want|wanted|wish|bet|doubt"
                   r"|recall|apologi[sz]e|noticed|notice|checked|check|missed|was|am|got\s+it|get\s+it|did|didn't"
                   r"|don't|do\s+not|hear|heard|mean|added|changed\s+(?:it|the|this|that)|ran|clicked|typed|pasted"
                   r"|copied|deleted|updated|installed|fixed|tested|sent|uploaded|downloaded|followed|agree|disagree"
                   r"|had\s+(?:a|an|such\s+a)\s+(?:great|good|nice|fun|wonderful|lovely|amazing|blast|bad|rough|hard))\b"
                   r"|\b(?:it|this|that|these|those|them|something|anything|everything|nothing|here|there)$"
                   r"|^i\s+[\w']+\s+(?:it|this|that|these|those|them)\b"
                   r"|\b(?:this|that|these|those)\s+(?:one|bug|error|code|file|thing|question|answer|part|step|week|way)\b",
                   re.I)
# Three words that say something lasting of the user: a verb of a lasting tie and a name ("I support Arsenal", "I speak
# Welsh"); "I met Sarah", "I called Mom" are passing.
_LASTING_THREE = re.compile(r"^i\s+(?:support|follow|speak|attend|sponsor|coach|manage|own|collect)\s+(?-i:[A-Z])[\w'&.-]*$",
                            re.I)
_GENERAL_IM = re.compile(r"^i(?:'m|\s+am)\s+(?:really\s+|very\s+|quite\s+)?(?:into|on\s+(?:the|a|an)|part\s+of|one\s+of"
                         r"|with\s+(?-i:[A-Z]))\b", re.I)


def _general_statement(clause: str, cue: bool) -> Statement | None:
    """A first-person clause no rule knows, as a less sure fact; None for talk about the conversation."""
    said, lead_cue = _strip_leads(clause.strip().strip("\"'"))  # "..., so now I report to Omar": a change
    said = said.rstrip(".!").strip()
    cue = cue or lead_cue or bool(CORRECTION_CUES.search(said))  # "I report to Omar now": said before "now" is dropped
    clause = _drop_temporal(said)
    plain = re.match(r"^i\s+(?!(?:'m|am)\b)[a-z]", clause, re.I) or _GENERAL_IM.match(clause)
    if not plain or _TALK.search(clause) or _NOT_A_FACT.search(clause) or _HEDGE.search(clause) \
            or (len(clause.split()) < 4 and not _LASTING_THREE.match(clause)):
        return None
    content = first_to_third(clause)
    if content is None or (_PASSING.search(said) and _DOING.match(content)):
        return None
    return describe(content[:500], None, 0.6, cue=cue)


_NOT_LASTING = re.compile(r"^i\s+(?:think|guess|believe|feel|wonder|see|mean|agree|suppose|hope|'ll|will|would|'d|can"
                          r"|can't|could|should|might|may|must)\b|\b(?:today|tonight|tomorrow|right now"
                          r"|this (?:morning|afternoon|evening))\b", re.I)
_ACKNOWLEDGED = re.compile(r"^(?:noted|got it|understood|ok(?:ay)?|great|so|to confirm|just to confirm|in other words"
                           r"|sure|perfect|thanks)\b[,:!.-]?\s*", re.I)


def first_to_third(text: str) -> str | None:
    """A first-person sentence no rule knows, in the third person ("I asked my manager for a raise" -> "User
    asked their manager for a raise"); None for questions, thoughts, plans of the moment and other sentences."""
    text, _cue = _strip_leads(text.strip().strip("\"'"))
    if not text or text.endswith("?"):
        return None
    text = _drop_temporal(text.rstrip(".!").strip())
    if not re.match(r"^i\b", text, re.I) or _NOT_LASTING.search(text) or re.search(r"\byou(?:r|'re)?\b", text, re.I) \
            or len(text.split()) > 25:  # talk to the assistant, or a story: not a fact to keep
        return None
    content = _third_person(text)
    return content if content.startswith("User ") and len(content.split()) >= 3 else None


def second_to_third(text: str) -> str | None:
    """What the assistant said to the user, about the user, in the third person ("Noted: written answers work best
    for you." -> "Written answers work best for the user"); None when it is not about the user or is a question."""
    text = text.strip().rstrip(".!").strip()
    if not text or text.endswith("?"):
        return None
    previous = None
    while previous != text:
        previous, text = text, _ACKNOWLEDGED.sub("", text).strip()
    text = re.sub(r"^i(?:'ll| will) (?:remember|note|keep in mind)(?: that)?\s+", "", text, flags=re.I)
    if not text or re.search(r"\b(?:i|me|my|mine|i'm|i'll|i've|i'd)\b", text, re.I):
        return None  # the assistant about itself
    text = re.sub(r"^you(?:'re| are)\b", "User is", text, flags=re.I)
    text = re.sub(r"^you(?:'ve| have)\b", "User has", text, flags=re.I)
    text = re.sub(r"^you\s+(?:do\s+not|don't)\b", "User does not", text, flags=re.I)
    match = re.match(r"^you\s+([\w'-]+)\b", text, flags=re.I)
    if match:
        text = f"User {third_person_verb(match.group(1))}" + text[match.end():]
    text = re.sub(r"\byour\b", "their", text, flags=re.I)
    text = re.sub(r"\byours\b", "theirs", text, flags=re.I)
    text = re.sub(r"\byourself\b", "themselves", text, flags=re.I)
    text = re.sub(r"\byou(?:'re| are)\b", "they are", text, flags=re.I)
    if not text.startswith("User"):
        text = re.sub(r"\byou\b", "the user", text, count=1, flags=re.I)
    text = re.sub(r"\byou\b", "them", text, flags=re.I)
    if not re.search(r"\b(?:User|user|their|them|they|theirs|themselves)\b", text):
        return None
    return text[0].upper() + text[1:]


def tidy_third_person(text: str) -> str:
    """A third-person line as a fact reads: "The user moved to Porto last month." -> "User moved to Porto"."""
    text = re.sub(r"^the\s+user\b", "User", text.strip(), flags=re.I)
    text = _drop_temporal(re.sub(r"(?<!\b[A-Z])\.$", "", text).strip())  # "U.S." keeps its last dot
    return text[:1].upper() + text[1:]


def link_statements(statements: list[Statement], stored: Sequence[Mapping[str, Any]] = ()) -> list[Candidate]:
    """Candidates for `statements` in order, each superseding the stored facts ({"id", "content", "category"})
    and the earlier statements ("#n") it replaces. A repeat of a statement still current is left out."""
    known = [(f["id"], describe(f["content"], f.get("category"))) for f in stored
             if isinstance(f, Mapping) and isinstance(f.get("id"), str) and isinstance(f.get("content"), str)]
    said: list[Statement] = []
    current: list[int] = []  # indices of statements nothing later has replaced
    out: list[Candidate] = []
    for statement in statements:
        if any(said[i].content.casefold() == statement.content.casefold() for i in current):
            continue
        targets = [fact_id for fact_id, old in known if supersedes(statement, old)]
        replaced = [i for i in current if supersedes(statement, said[i])]
        targets += [f"#{i}" for i in replaced]
        current = [i for i in current if i not in replaced] + [len(said)]
        said.append(statement)
        out.append(Candidate(statement.content, statement.category or "context", statement.confidence,
                             tuple(targets)))
    return out


def heuristic_facts(text: str, stored: Sequence[Mapping[str, Any]] = ()) -> list[Candidate]:
    """First-person English statements in `text` turned into facts, with honest confidences; a correction
    supersedes the stored fact or the earlier statement about the same thing."""
    return link_statements(_said(text, stored), stored)


def _said(text: str, stored: Sequence[Mapping[str, Any]]) -> list[Statement]:
    """What one message of the user states, the stored facts it says it misspoke ("I meant X, not Y") and the
    e-mail address or phone number it says changed."""
    swapped = swapped_values(text, stored)
    new = {m.group(0) for s in swapped for kind in _VALUE_KINDS for m in kind.finditer(s.content)}
    said = [s for s in heuristic_statements(text, general=True)  # "User's new number is ...": the swap says it
            if not new or not any(m.group(0) in new for kind in _VALUE_KINDS for m in kind.finditer(s.content))]
    meant = [s for s in meant_statements(text, stored)  # what a statement replaces already is not said again
             if not any(supersedes(t, describe(s.restates or "")) for t in said)]
    return said + meant + swapped


# An e-mail address or a phone number said as the new one ("Please use raj@new.example from now on", "reach me on
# +351 912 000 111 now"): it replaces the one a stored fact of the user's holds, unless it is someone else's.
_VALUE_KINDS = (re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?![\w-])"),
                re.compile(r"(?<![\w+])\+?\d[\d ().-]{5,}\d(?!\w)"))
_NEW_VALUE = re.compile(r"\b(?:now|new|from\s+now\s+on|changed|updated|instead|no\s+longer|any\s*more|old|dead"
                        r"|going\s+forward|switched)\b", re.I)
# What a phone number is said with, and the stored facts whose number is something else's (an account, a card).
_PHONE_WORDS = re.compile(r"\b(?:phone|mobile|cell|number|tel|telephone|whatsapp|signal|reach\s+me|call\s+me"
                          r"|text\s+me)\b", re.I)
_OTHER_NUMBERS = re.compile(r"\b(?:account|card|iban|order|customer|member(?:ship)?|passport|id|licen[cs]e|policy|tax"
                            r"|social|badge|employee|student|tracking|flight|booking|room|seat|pin)\b", re.I)
_DATE_LIKE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$|^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$")
_SOMEONE_ELSES = re.compile(r"\b(?:his|her|their|its)\b|\b\w+['’]s\s+(?:new\s+)?(?:e-?mail|number|phone|cell|mobile"
                            r"|address|contact)", re.I)


def swapped_values(text: str, stored: Sequence[Mapping[str, Any]]) -> list[Statement]:
    """The stored facts of the user's own e-mail address or phone number, restated with the one `text` says is new."""
    if not _NEW_VALUE.search(text) or _SOMEONE_ELSES.search(text) or text.rstrip().endswith("?"):
        return []
    found: list[Statement] = []
    for kind in _VALUE_KINDS:
        phone = kind is _VALUE_KINDS[1]
        if phone and (not _PHONE_WORDS.search(text) or _OTHER_NUMBERS.search(text)):
            continue  # a run of digits with no word of a phone, or said of an order, a card, an account
        held_now = " ".join(f["content"] for f in stored
                            if isinstance(f, Mapping) and isinstance(f.get("content"), str))
        said = [v for v in dict.fromkeys(m.group(0) for m in kind.finditer(text)) if v not in held_now
                and not (phone and (_DATE_LIKE.match(v) or sum(c.isdigit() for c in v) < 7))]
        if len(said) != 1:
            continue  # none new, or two: which one is the user's now is not said plainly
        for fact in stored:
            content = fact.get("content") if isinstance(fact, Mapping) else None
            if not isinstance(content, str) or not content.startswith("User's ") \
                    or (phone and (_OTHER_NUMBERS.search(content) or not _PHONE_WORDS.search(content))):
                continue
            held = kind.search(content)
            if held and held.group(0) != said[0]:
                found.append(describe(content[:held.start()] + said[0] + content[held.end():],
                                      fact.get("category") or "context", 0.85, cue=True))
                break
    return found


# "Sorry, I meant Lisbon, not Lyon": a word of a stored fact said wrong; the fact is restated with the right one.
_MEANT = re.compile(r"\bI\s+meant\s+(?P<new>[^,.;!?]{1,40}?)\s*,?\s+(?:not|instead\s+of|rather\s+than)\s+"
                    r"(?P<old>[^,.;!?]{1,40}?)\s*(?:[,.;!?]|$)", re.I)

# "We ended up renaming Rex to Bruno", "Luna goes by Mochi now": a name a stored fact holds, changed.
_RENAMED = re.compile(r"\brenam(?:ed|ing)\s+(?P<old>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+(?:to|as)\s+"
                      r"(?P<new>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s*(?:[,.;!]|$)")
_GOES_BY = re.compile(r"(?<![\w'-])(?P<old>[A-Z][\w'-]*)\s+(?:goes\s+by|is\s+called|answers\s+to)\s+"
                      r"(?P<new>[A-Z][\w'-]*)\s+now\b")

# "Correction: I actually use Neovim, not VS Code", "My mistake, it's shellfish, not peanuts", "Oops, Heathrow, not
# Gatwick": "X, not Y" after a word owning a mistake, so that no other word of the fact need be said.
_VALUE = r"[\w'’-]+(?:\s+[\w'’-]+){0,2}?"
_CUED = re.compile(r"\b(?:correction|actually|sorry|oops|my\s+mistake|my\s+bad|typo(?:\s+earlier)?|scratch\s+that)\b"
                   r"[\s,:;—–-]*(?:(?:it|that)(?:['’]s|\s+is|\s+was)\s+|I\s+(?:actually\s+)?\w+\s+)?"
                   rf"(?P<new>{_VALUE})\s*,?\s+not\s+(?P<old>{_VALUE})\s*(?:[,.;!]|$)", re.I)
# "My sister moved from Rome to Milan", "I transferred from UCLA to Stanford", "They moved the meeting from Monday to
# Thursday": a value a stored fact holds, changed by a verb of change, of the one the fact is about (below).
_FROM_TO = re.compile(r"\b(?:moved|transferred|switched|went|upgraded|downgraded|changed|migrated|relocated|swapped"
                      r"|shifted|converted)(?:\s+[\w'’-]+){0,3}?\s+from\s+(?:(?:the|an?|my|our)\s+)?"
                      rf"(?P<old>{_VALUE})\s+to\s+(?:(?:the|an?)\s+)?(?P<new>{_VALUE})\s*(?:[,.;!—]|$|\s+(?:in|on|at|"
                      r"last|this|since|for|after|before|yesterday|today|recently|now)\b)", re.I)
# Words before a change that name no one: "I", "we", "they" and the words said around them ("we've finally moved")
_NO_ONE = frozenset(stem(w) for w in ("i", "we", "they", "my", "our", "finally", "just", "recently", "also", "then", "so",
                                      "and", "but", "ve", "have", "had", "has"))
_NEGATED = re.compile(r"\b(?:never|not|no\s+longer)\b|n['’]t\b", re.I)


def _changes_whose(sentence: str, m: re.Match, fact: str) -> bool:
    """Whether the change `m` (_FROM_TO) is of the one `fact` is about: the words before its verb name no one (I,
    we, they) or name someone the fact names ("My sister moved": "User's sister lives in Rome"), and deny nothing."""
    before = re.split(r"[,;:—–]", sentence[:m.start()])[-1]
    if _NEGATED.search(before):
        return False
    named = _content_stems(before) - _NO_ONE
    return not named or bool(named & _content_stems(fact))


MAX_TAKEN_BACK = 5  # "X, not Y" read in a message at most: a page of them costs no more than a line
# "The cat's name is Lulu, not Luna", "My flight is on Friday, not Thursday": a name, a day or a number set against the
# one a stored fact holds, in a sentence about what that fact is about (another of its words said too).
_NAME = r"[A-Z0-9][\w'-]*(?:\s+[A-Z][\w'-]*){0,2}"
# "\s*,?\s+" would try every split of a run of blanks between the two: quadratic in it
_CONTRAST = re.compile(rf"(?P<new>(?<![\w'-]){_NAME})(?:\s*,\s+|\s+)not\s+(?P<old>{_NAME})\s*(?:[,.;!]|$)")


def meant_statements(text: str, stored: Sequence[Mapping[str, Any]]) -> list[Statement]:
    """The stored facts that hold the word "I meant X, not Y" (or "..., X, not Y" about the fact) takes back,
    restated with X, as corrections."""
    found: list[Statement] = []
    taken = 0
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        if sentence.rstrip().endswith("?"):
            continue
        meant = [(m, False) for pattern in (_MEANT, _RENAMED, _GOES_BY, _CUED, _FROM_TO)
                 for m in itertools.islice(pattern.finditer(sentence), MAX_TAKEN_BACK)]
        said = meant or [(m, True) for m in itertools.islice(_CONTRAST.finditer(sentence), MAX_TAKEN_BACK)]
        taken += len(said)
        if taken > MAX_TAKEN_BACK:
            break
        for m, about in said:
            was, new = m.group("old").strip(), m.group("new").strip()
            old = re.compile(rf"(?<!\w){re.escape(was)}(?!\w)", re.I)
            others = _content_stems(old.sub(" ", sentence.replace(new, " ")))
            fact = next((f for f in stored if isinstance(f, Mapping) and isinstance(f.get("content"), str)
                         and old.search(f["content"])
                         and (not about or others & _content_stems(old.sub(" ", f["content"])))
                         and (m.re is not _FROM_TO or _changes_whose(sentence, m, f["content"]))), None)
            if fact is not None and new and new.casefold() != was.casefold():
                found.append(replace(describe(old.sub(lambda _m: new, fact["content"], count=1)[:500],
                                              fact.get("category") or "context", 0.85, cue=True), restates=fact["content"]))
    return found


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(re.sub(r"['’]s\b", "", text)) if w not in STOPWORDS and w != "user"}


class HeuristicExtractor:
    """The offline default: no LLM, English first-person statements of the user only."""

    offline = True

    def extract(self, messages: list[dict[str, str]], current_memory: Mapping[str, Any], *,
                said_on: str | None = None) -> ExtractionReply:
        stored = current_memory.get("facts") or []
        statements = [s for m in messages
                      if m.get("role") == "user" and not m.get("content", "").startswith("[SCHEDULED]")
                      for s in _said(m["content"], stored)]
        reply = ExtractionReply(facts=link_statements(statements, stored))
        targets = {ref for c in reply.facts for ref in c.supersedes}
        replaced = [f["content"] for f in stored if isinstance(f, Mapping) and f.get("id") in targets
                    and isinstance(f.get("content"), str)]
        reply.summaries.update(fact_summaries([(c.content, c.category) for c in reply.facts], current_memory, replaced))
        return reply
