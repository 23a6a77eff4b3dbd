"""A change said in other words, restated in the words the offline rules know (utterances.py hands each sentence here).

People seldom say "Actually my manager is Rui now". They say "My new manager is Rui", "I got a Pixel to replace my
iPhone", "I'm on Linux instead of Windows", "I've replaced coffee with green tea", "Radiohead isn't my favourite band
anymore, it's Muse", "I renamed my dog: he's Max now", "My daughter just turned 7". Each becomes the plain form
("my manager is Rui", "I switched from my iPhone to a Pixel", ...) and is marked as a change, so that it replaces
what it changes. Measured on tests/data/corrections_fresh.json (see tests/extraction/test_corrections_fresh.py)."""

from __future__ import annotations

import re

_THING = r"(?:[\w-]+\s+){0,2}[\w-]+"
_ORG = r"(?-i:[A-Z])[\w&.'-]*(?:\s+(?-i:[A-Z])[\w&.'-]*){0,3}"  # a name in capitals (whatever the flags): a town
# A place of work or a home the user says is over: "Shopify is behind me", "said goodbye to Leeds", "I'm done with X"
_ENDED_PLACE = (rf"(?P<old>{_ORG})\s+is\s+(?:behind\s+me|in\s+the\s+past|history|my\s+(?:former|old|previous|ex-?)\s*"
                r"(?:employer|job|company|workplace|home|town|city)(?:\s+now)?)|(?:I\s+|we\s+)?(?:have\s+|'ve\s+)?"
                rf"said\s+goodbye\s+to\s+(?P<old2>{_ORG})|I(?:'m|\s+am)\s+done\s+with\s+(?P<old3>{_ORG})")
_RULES: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.I), r) for p, r in [
    # "My new manager is Rui" -> "my manager is Rui" (but not "my new job is hard": a name or a number must follow)
    (rf"^my\s+new\s+(?P<what>{_THING}?)\s+(?P<is>is|are|'s)\s+(?P<value>(?:(?:dr|mr|mrs|ms|prof)\.?\s+)?(?-i:[A-Z0-9]).*)$",
     "my {what} {is} {value}"),
    # "I got a Pixel to replace my iPhone" -> "I switched from my iPhone to a Pixel"
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?(?:got|bought|picked\s+up|switched\s+to|started\s+using"
     r"|went\s+with)\s+(?P<new>.+?)\s+to\s+replace\s+(?:my|our|the)\s+(?P<old>.+)$", "I switched from {old} to {new}"),
    # "We just got our own place in Dallas", "I finally got my own flat in Leeds" -> "I moved to Dallas"
    (rf"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?got\s+(?:my|our)\s+own\s+(?:flat|apartment|place|house"
     rf"|home|condo)\s+in\s+(?P<new>{_ORG})(?P<tail>\s+(?:last|this|in|on|a|two|three)\b.*)?$", "I moved to {new}"),
    # "We've just moved into our new place in Bristol" -> "I moved to Bristol"
    (rf"^(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?moved\s+into\s+(?:my|our|a|the)\s+(?:new\s+)?"
     rf"(?:flat|apartment|place|house|home|condo)\s+in\s+(?P<new>{_ORG})(?P<tail>\s+(?:last|this|in|on|a|two|three)\b.*)?$",
     "I moved to {new}"),
    # "We bought a house in Bordeaux and moved in last week" -> "I moved to Bordeaux" (a house bought alone is not a move)
    (rf"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?bought\s+(?:a|an|our|my)\s+(?:new\s+)?(?:flat|apartment"
     rf"|place|house|home|condo)\s+in\s+(?P<new>{_ORG})\s+and\s+(?:have\s+|'ve\s+|just\s+)?moved\s+in\b.*$",
     "I moved to {new}"),
    # "I've replaced coffee with green tea" -> "I switched from coffee to green tea"
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?replaced\s+(?:my\s+|the\s+)?(?P<old>.+?)\s+with\s+"
     r"(?P<new>.+)$", "I switched from {old} to {new}"),
    # "I'm on Linux instead of Windows", "I use Zed instead of VS Code" -> "I switched from Windows to Linux"
    (r"^I(?:'m|\s+am)?\s+(?:now\s+)?(?:on|using|use|with|drink|drinking|drive|driving|play|playing)\s+(?P<new>[^,]+?)"
     r"\s+instead\s+of\s+(?P<old>[^,]+?)(?P<tail>\s+(?:now|nowadays|these\s+days))?$", "I switched from {old} to {new}"),
    # "Radiohead isn't my favourite band anymore, it's Muse" -> "my favourite band is Muse"
    (r"^(?P<old>[\w .'&-]+?)\s+(?:isn't|is\s+not|is\s+no\s+longer|'s\s+not)\s+my\s+(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+?)"
     r"(?:\s+any\s*more|\s+any\s+longer)?\s*[,;:-]+\s*(?:now\s+)?(?:it's|it\s+is)\s+(?P<value>.+?)(?:\s+now)?$",
     "my {what} is {value}"),
    # "I renamed my dog: he's Max now", "I renamed my dog to Max" -> "my dog's name is Max"
    (r"^I\s+(?:have\s+|'ve\s+)?renamed\s+(?:my|our|the)\s+(?P<what>[\w-]+)(?:\s+to\s+|\s*[:,;-]+\s*(?:he|she|it|they)"
     r"(?:'s|\s+is|'re|\s+are)\s+(?:called\s+|named\s+)?)(?P<value>(?-i:[A-Z])[\w'-]*)(?:\s+now)?$",
     "my {what}'s name is {value}"),
    # "I'm no longer with Acme, I joined Stripe in June" -> "I'm no longer at Acme; I joined Stripe; I work at Stripe"
    (r"^I(?:'m|\s+am)\s+no\s+longer\s+(?:with|at)\s+(?P<old>[^,;]+?)\s*[,;]\s*(?:and\s+|so\s+)?I(?:'ve|\s+have)?\s+"
     r"(?:just\s+|now\s+)?(?:joined|started\s+(?:at|with)|signed\s+with|moved\s+to)\s+(?P<new>(?-i:[A-Z])[^,;]*?)"
     r"(?:\s+(?:in|last|this|on|a|two|three)\s+.+)?$", "I'm no longer at {old}; I joined {new}; I work at {new}"),
    # "I left Globex last month and now I'm at Umbrella" -> "I'm no longer at Globex; I joined Umbrella; I work at Umbrella"
    (rf"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?left\s+(?P<old>{_ORG})"
     rf"(?:\s+(?:last|this|in|on|a|two|three)(?:\s+\w+){{1,3}})?(?:\s*[,;]\s*|\s+)(?:and\s+|so\s+)?(?:now\s+)?"
     rf"I(?:'m|\s+am)\s+(?:now\s+)?(?:at|with)\s+(?P<new>{_ORG})(?:\s+now)?$",
     "I'm no longer at {old}; I joined {new}; I work at {new}"),
    # "I'm a team lead now rather than a developer" -> "I'm a team lead"
    (r"^I(?:'m|\s+am)\s+(?P<new>(?:an?\s+)?[^,]+?)\s+(?:now\s+)?(?:rather\s+than|instead\s+of)\s+(?:an?\s+)?[^,]+?"
     r"(?:\s+(?:now|nowadays|these\s+days))?$", "I'm {new}"),
    # "My number changed, it's 555-0199 now" -> "my number is 555-0199"
    (rf"^my\s+(?P<what>{_THING}?)\s+(?:has\s+)?changed\s*[,;:-]+\s*(?:now\s+)?(?:it's|it\s+is)\s+(?P<value>.+?)"
     r"(?:\s+now)?$", "my {what} is {value}"),
    # "My car's a Civic now", "My gym is Fitzone now" -> "my car is a Civic" (a name in capitals, or a number)
    (rf"^my\s+(?P<what>{_THING}?)\s*(?P<is>\bis|\bare|'s)\s+(?P<value>(?:(?:a|an|the)\s+)?(?-i:[A-Z0-9])[^,;]*?)\s+now$",
     "my {what} {is} {value}"),
    # "Just got a new phone, a Galaxy S24" -> "my phone is a Galaxy S24"
    (r"^(?:I(?:'ve|\s+have)?\s+)?(?:just\s+|finally\s+)?(?:got|bought)\s+(?:myself\s+)?a\s+new\s+(?P<what>[\w-]+)"
     r"\s*[,:—–-]+\s*(?P<value>(?:a|an|the)\s+(?-i:[A-Z0-9]).*?)$", "my {what} is {value}"),
    # "I'm a Mac user now" -> "I switched to a Mac"
    (r"^I(?:'m|\s+am)\s+(?:now\s+)?an?\s+(?P<new>(?-i:[A-Z])[\w+.-]*(?:\s+(?-i:[A-Z])[\w+.-]*)?)\s+user(?:\s+now"
     r"|\s+these\s+days)$", "I switched to {new}"),
    # "My email address is now ana@new.example" -> "my email address is ana@new.example"
    (rf"^my\s+(?P<what>{_THING}?)\s+(?P<is>is|are|'s)\s+now\s+(?P<value>.+)$", "my {what} {is} {value}"),
    # "I've swapped my Android for an iPhone", "I ditched VS Code for Neovim" -> "I switched from my Android to an iPhone"
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?(?:swapped|traded|exchanged|ditched|dropped|abandoned)"
     r"(?:\s+in)?\s+(?P<old>.+?)"
     r"\s+for\s+"
     r"(?P<new>.+)$", "I switched from {old} to {new}"),
    # "Padel has replaced tennis as my favourite sport" -> "my favourite sport is Padel"
    (r"^(?P<new>[\w .'&+-]+?)\s+(?:has\s+|just\s+|finally\s+)*(?:replaced|taken\s+over\s+from|overtaken)\s+"
     r"[\w .'&+-]+?\s+as\s+my\s+(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+)(?:\s+now)?$", "my {what} is {new}"),
    # "We're Vancouver-based now" -> "I live in Vancouver"
    (r"^(?:I'm|I\s+am|we're|we\s+are)\s+(?:now\s+)?(?P<value>(?-i:[A-Z])[\w'.]*(?:\s+(?-i:[A-Z])[\w'.]*)*)-based"
     r"(?:\s+(?:now|these\s+days|nowadays))?$", "I live in {value}"),
    # "Home is Cardiff these days" -> "I live in Cardiff"
    (r"^(?:my\s+)?home\s+(?:is|'s)\s+(?:now\s+)?(?:in\s+)?(?P<value>(?-i:[A-Z])[\w'-]*(?:,?\s+(?-i:[A-Z])[\w'-]*)*)"
     r"(?:\s+(?:now|these\s+days|nowadays))?$", "I live in {value}"),
    # "Coldplay used to be my favourite band; now it's Arctic Monkeys" -> "my favourite band is Arctic Monkeys"
    (r"^[\w .'&+-]+?\s+used\s+to\s+be\s+my\s+(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+)\s*[,;:—–-]+\s*(?:but\s+)?"
     r"(?:now\s+)?(?:it's|it\s+is)\s+(?:now\s+)?(?P<value>.+?)(?:\s+now)?$", "my {what} is {value}"),
    # "Jonas and I broke up; I'm seeing Mateo now" -> "my partner is Mateo"
    (rf"^(?:(?P<old>{_ORG})\s+and\s+I|I\s+and\s+(?P<old2>{_ORG}))\s+(?:broke\s+up|split\s+up|separated)\s*[,;:—–-]+\s*"
     rf"(?:and\s+|so\s+|but\s+)?(?:now\s+)?I(?:'m|\s+am)\s+(?:now\s+)?(?:seeing|dating|with|together\s+with)\s+"
     rf"(?P<new>{_ORG})(?:\s+now)?$", "my partner is {new}"),
    # "Chris and I split up in August" -> "I broke up with Chris in August"
    (r"^(?P<who>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)\s+and\s+I\s+(?:have\s+|just\s+|finally\s+)*(?:split\s+up|broke\s+up"
     r"|separated|got\s+divorced|divorced)\b(?P<tail>.*)$", "I broke up with {who} {tail}"),
    # "Shopify is behind me — I signed with Canva in March", "Said goodbye to Leeds; we're settled in York now": a place
    # of work or a home ended, then the new one -> "I left Shopify; I work at Canva", "I left Leeds; I live in York"
    (rf"^(?:{_ENDED_PLACE})\s*[,;:—–-]+\s*(?:and\s+|so\s+|now\s+)*(?:I(?:'ve|\s+have)?\s+(?:just\s+|now\s+)?"
     r"(?:signed\s+with|joined|started\s+(?:at|with)|work\s+(?:at|for))|I(?:'m|\s+am)\s+(?:now\s+)?(?:at|with))\s+"
     rf"(?P<new>{_ORG})(?:\s+(?:in|last|this|on|since)\s+.+)?(?:\s+now)?$", "I left {old}; I work at {new}"),
    (rf"^(?:{_ENDED_PLACE})\s*[,;:—–-]+\s*(?:and\s+|so\s+|now\s+)*(?:I(?:'m|\s+am)|we(?:'re|\s+are))\s+(?:now\s+)?"
     rf"(?:settled|living|based)\s+in\s+(?P<new>{_ORG})(?:\s+(?:now|these\s+days))?$", "I left {old}; I live in {new}"),
    # "After ten years in Madrid I finally moved to Valencia" -> "I left Madrid; I live in Valencia"
    (rf"^after\s+[\w\s-]{{1,40}}?\s+in\s+(?P<old>{_ORG})\s*,?\s+(?:I|we)\s+(?:have\s+|'ve\s+)?(?:finally\s+|just\s+)?"
     rf"(?:moved|relocated)\s+to\s+(?P<new>{_ORG})(?:\s+(?:in|last|this|on)\s+.+)?$", "I left {old}; I live in {new}"),
    # "I've cut out coffee completely, only tea now" -> "I switched from coffee to tea"
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?(?:cut\s+out|given\s+up|gave\s+up|stopped\s+(?:drinking|eating))\s+"
     r"(?P<old>[^,;]+?)(?:\s+completely|\s+entirely|\s+altogether)?\s*[,;:—–-]+\s*(?:it's\s+)?only\s+(?P<new>[^,;]+?)"
     r"(?:\s+now|\s+these\s+days)?$", "I switched from {old} to {new}"),
    # "I finally made the jump from Windows to Linux" -> "I switched from Windows to Linux"
    # "I've moved on from oat milk to soy", "I switched my major from law to economics": the same
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?(?:made\s+the\s+(?:jump|switch|leap|move)|migrated"
     r"|went\s+over|moved\s+on|switched\s+(?:my|our)\s+[\w-]+(?:\s+[\w-]+)?)\s+from\s+(?P<old>.+?)\s+to\s+(?P<new>.+)$",
     "I switched from {old} to {new}"),
    # "I got a Pixel 8 last week, the iPhone is in a drawer now" -> "I switched from the iPhone to a Pixel 8"
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?(?:got|bought|picked\s+up)\s+(?P<new>(?:a|an|the|my)\s+"
     r"[^,;]+?)(?:\s+(?:last|this|in|on|a|two|three)\s+\w+)?\s*[,;:—–-]+\s*(?:and\s+|so\s+)?(?P<old>(?:my|the|our)\s+"
     r"(?:old\s+)?[^,;]+?)\s+(?:is|'s)\s+(?:now\s+)?(?:in\s+a\s+drawer|retired|gone|sold|dead|broken|history|in\s+the\s+bin"
     r"|collecting\s+dust|a\s+backup)(?:\s+now)?$", "I switched from {old} to {new}"),
    # "I moved out of my parents' place, I rent a studio in Porto now" -> "I don't live with my parents anymore; I moved
    # to Porto" (the home it ends, when it is someone's: "my parents' place", "my sister's flat")
    (rf"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?moved\s+out\s+of\s+(?:my|our)\s+(?:(?P<old>[\w-]+s)['’]"
     rf"|(?P<old2>[\w-]+)['’]s)\s+(?:place|house|flat|home|apartment)\s*[,;:—–-]+\s*(?:and\s+|so\s+)?(?:now\s+)?I(?:'m|\s+am)?"
     rf"\s+(?:now\s+)?(?:rent(?:ing)?|live|living|have|got|share|sharing)\b[^,;]*?\s+in\s+(?P<new>{_ORG})(?:\s+now)?$",
     "I don't live with my {old} anymore; I moved to {new}"),
    (rf"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?moved\s+out\s+of\s+[^,;]+?\s*[,;:—–-]+\s*(?:and\s+"
     rf"|so\s+)?(?:now\s+)?I(?:'m|\s+am)?\s+(?:now\s+)?(?:rent(?:ing)?|live|living|have|got|share|sharing)\b[^,;]*?\s+in"
     rf"\s+(?P<new>{_ORG})(?:\s+now)?$", "I moved to {new}"),
    # "Arctic Monkeys are my new favourite band" -> "my favourite band is Arctic Monkeys"
    (r"^(?P<value>[\w .'&+-]+?)\s+(?:is|are|'s|'re)\s+my\s+new\s+(?P<what>favou?rite\s+[\w-]+)(?:\s+now)?$",
     "my {what} is {value}"),
    # "I quit the café, I'm a bike courier now" -> "I work as a bike courier" (a job: "a new person" is none)
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?(?:quit|left)\s+(?P<old>[^,;]+?)\s*[,;:—–-]+\s*(?:and\s+|so\s+)?"
     r"(?:now\s+)?I(?:'m|\s+am)\s+(?:now\s+)?(?P<new>an?\s+(?!(?:much|more|new|different|better|happier|healthier)\b)"
     r"(?:[\w-]+\s+){0,2}?[\w-]*(?:er|or|ist|ian|ant|ent|man|woman|chef|nurse|cook|pilot|clerk|guide|coach|medic|tutor))"
     r"\s+now$", "I work as {new}"),
    # "I cancelled PureGym and joined the climbing gym on Elm Street" -> "I switched from PureGym to the climbing gym ..."
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?(?:cancell?ed|quit|dropped)\s+(?:my\s+)?(?P<old>[^,;]+?)"
     r"(?:\s+membership)?(?:\s*[,;]\s*|\s+)(?:and\s+)?(?:then\s+)?(?:joined|signed\s+up\s+(?:for|with|at)|switched\s+to)\s+"
     r"(?P<new>[^,;]+?)(?:\s+(?:instead|now))?$", "I switched from {old} to {new}"),
    # "Miso died in spring; we adopted a kitten called Tofu" -> "I have a kitten called Tofu"
    (rf"^(?P<old>{_ORG})\s+(?:died|passed\s+away|is\s+gone)\b[^,;]*?\s*[,;:—–-]+\s*(?:and\s+|so\s+|then\s+)?(?:now\s+)?"
     rf"(?:we|I)(?:'ve|\s+have)?\s+(?:adopted|got|rescued|brought\s+home)\s+(?P<new>(?:a|an)\s+(?:new\s+)?[\w-]+\s+"
     rf"(?:called|named)\s+(?-i:[A-Z])[\w'-]*)\b.*$", "I have {new}"),
    # "basketball is my favourite sport now" (after a clause of its own) -> "my favourite sport is basketball"
    (r"^(?P<value>[\w .'&+-]+?)\s+is\s+my\s+(?P<what>(?:new\s+)?favou?rite\s+[\w-]+)\s+now$", "my {what} is {value}"),
    # "I eat meat again since last summer" -> "I'm no longer vegetarian; I eat meat"
    (r"^I(?:'m|\s+am)?\s+(?:started\s+|began\s+|back\s+to\s+)?eat(?:ing)?\s+meat\s+again\b.*$",
     "I'm no longer vegetarian; I eat meat"),
    # "Sushi was my favourite food for years, but ramen has taken over" -> "my favourite food is ramen"
    (r"^[\w .'&+-]+?\s+was\s+my\s+(?P<what>(?:[\w-]+\s+){0,2}?[\w-]+)(?:\s+for\s+(?:years|ages|a\s+long\s+time|a\s+while"
     r"|\w+\s+years))?\s*[,;:—–-]+\s*(?:but\s+)?(?:now\s+)?(?P<value>[\w .'&+-]+?)\s+(?:has\s+)?(?:taken\s+over"
     r"|won\s+me\s+over|is\s+the\s+one)(?:\s+now)?$", "my {what} is {value}"),
    # "I've gone vegan", "I turned vegetarian in May" -> "I'm vegan"
    (r"^I(?:'ve|\s+have)?\s+(?:just\s+|now\s+|finally\s+|recently\s+)?(?:gone|turned|become|became|went)\s+"
     r"(?P<new>vegan|vegetarian|pescatarian)\b.*$", "I'm {new}"),
    # "I'm at Initech since March" -> "I work at Initech" (a month, a year or "last ..." after "since": a stay is not)
    (rf"^I(?:'m|\s+am)\s+(?:now\s+)?at\s+(?P<new>{_ORG})\s+since\s+(?:january|february|march|april|may|june|july"
     r"|august|september|october|november|december|(?:19|20)\d\d|last\s+(?:year|month|spring|summer|autumn|fall|winter))"
     r"\b.*$", "I work at {new}"),
    # "We have three kids now, the baby arrived in May!" -> "we have three kids" (what follows tells more)
    (r"^(?P<main>(?:I|we)\s+(?:have|'ve\s+got)\s+(?:[\w-]+\s+){1,2}?(?:kids|children|sons|daughters|dogs|cats"
     r"|grandchildren|grandkids|pets))\s+now\s*[,;:—–-](?!\s*(?:and\s+|but\s+|so\s+|also\s+)?(?:I|I'm|I've|I'd"
     r"|we|we're|we've|my|our)\b).*$", "{main}"),  # what follows tells more, unless it is another statement of theirs
    # "My daughter had her 7th birthday on Sunday" -> "my daughter is 7"
    (r"^my\s+(?P<who>[\w-]+)\s+(?:just\s+)?(?:had|celebrated)\s+(?:his|her|their)\s+(?P<value>\d{1,3})(?:st|nd|rd|th)"
     r"\s+birthday\b.*$", "my {who} is {value}"),
    # "My daughter just turned 7" -> "my daughter is 7"; "I just turned 35" -> "I'm 35"
    (r"^my\s+(?P<who>[\w-]+)\s+(?:just\s+|recently\s+)?turned\s+(?P<value>\d{1,3})\b.*$", "my {who} is {value}"),
    (r"^I\s+(?:just\s+|recently\s+)?turned\s+(?P<value>\d{1,3})\b.*$", "I'm {value}"),
]]


# A clause of its own before the change: "Priya left, my new manager is Tom", "Long story short, I got a Pixel to
# replace my iPhone", "Doctor's orders: I've replaced coffee with green tea".
_LEAD = re.compile(r"^(?P<lead>[^,;:]{2,80}?)\s*[,;:]\s*(?:(?:so|and|but|then)\s+)?(?P<rest>\S.*)$", re.I)


_BLANKS = re.compile(r"\s{2,}")


def _restated(sentence: str) -> str | None:
    sentence = _BLANKS.sub(" ", sentence)  # a run of blanks is one: several rules try a blank at every place of it
    for pattern, template in _RULES:
        match = pattern.match(sentence)
        if match:
            values = {k: (v or "").strip() for k, v in match.groupdict().items()}
            values["old"] = values.get("old") or values.get("old2") or values.get("old3") or ""
            if values.get("is") == "'s":  # "my car's a Civic" -> "my car is a Civic"
                values["is"] = "is"
            return template.format(**values).strip()
    return None


def restate(sentence: str) -> tuple[str, bool]:
    """(`sentence` restated in the rules' words, True) when it says a change in one of the ways above, else
    (`sentence`, False)."""
    found = _restated(sentence)
    return (sentence, False) if found is None else (found, True)


def change_after_lead(sentence: str) -> tuple[str, str] | None:
    """(the clause before, the change) where `sentence` says a change in one of the ways above only after a clause of
    its own ("Priya left, my new manager is Tom"), so that each is read as a sentence; else None."""
    sentence = _BLANKS.sub(" ", sentence)  # as _restated reads it
    lead = _LEAD.match(sentence)
    if lead is None or _restated(sentence) is not None or _restated(lead.group("rest").rstrip(".!… ")) is None:
        return None
    return lead.group("lead").strip(), lead.group("rest")
