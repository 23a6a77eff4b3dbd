"""Relative time expressions ("yesterday", "last Saturday", "two weeks ago", "in March") resolved to absolute dates.

`resolve_dates(text, said_on)` finds the expressions and says what each means against the day the text was
said; `annotate(text, said_on)` writes that meaning after each one ("yesterday (7 May 2023)"), which is what
episodes store and show, so that a passage read months later still says when. The expressions are found by
the patterns below; what a count of days, weeks, months or years back or ahead means is computed by
`dateparser` (a maintained library); what it is weak at (a weekday named "last", weeks and weekends, a month
named without a year, "the week before", seasons) is computed here. A length of time up to the day said ("seven
years now", "five years already", "for the past two months") is written as when it began: "since 2016". Also
"a fortnight ago", "a decade ago", "the week before last", "the month after next", "the Friday after next" (a
week past the coming Friday), "the Monday before last", "two Saturdays ago", a holiday on a fixed day named
"last", "this" or "next" ("last Christmas", "next Valentine's Day"), and a weekday said with no "last" or "next"
("on Sunday": the last one in a sentence told in the past, else the coming one; "on Sundays" is a habit), a part
of the period said in ("at the end of the month", "by the start of the week": that month, that week), "mid-June",
a count from a weekday ("a week from Friday": a week past the coming Friday), "over the weekend", "the night
before last", a weekday with a part of the day ("Friday night"), Easter and Thanksgiving (moveable), and "the
first (last) week (weekend) of May", "Friday week", "a year ago this week", "within the next three days", a day of a
month with no year ("on May 2nd", "the 5th of July": as a bare weekday), a weekday after "by" or "until", "Monday
next week", and dates as typed in chat ("yday", "tmrw", "2 wks ago", "last wk", "3 mos ago", "a cpl of days ago"). A month
or a day of a birth is left alone ("I was born in March"), as is a season whose year is named. A text
in Portuguese, Spanish, German, French, Italian or Dutch has its own words read (`text.date_words`).

A value is written at the precision the expression has: a day ("7 May 2023"; "Tuesday 18 July 2023" for a weekday
written short, "last Tues", so that the day is named in full), a week ("the week of 1 May
2023", weeks start on Monday), a weekend ("the weekend of 6 May 2023"), a month ("June 2023"), a season
("summer 2022") or a year ("2022").
"""

from __future__ import annotations

import re
from bisect import bisect_left
from calendar import monthrange
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from memory_core.text import date_words
from memory_core.text.holidays import HOLIDAY, holiday_on
from memory_core.text.spans import Spans

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            **{w: n for n, w in enumerate("thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(),
                                          13)},
            "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "a couple of": 2, "a couple": 2, "couple of": 2,
            "a few": 3, "few": 3, "several": 3, "couple": 2, "a cpl of": 2, "cpl of": 2}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
# a count: digits or one of _NUMBERS' words, the longest first ("a couple of" before "a couple", "eighteen" before
# "eight"); not inside a word ("often days ago") or a number ("thirty-five")
_NUM = (r"(?<![\w'’-])(?P<n>\d{1,3}|" + "|".join(re.escape(w) for w in sorted(_NUMBERS, key=len, reverse=True)) + ")")
_UNIT = r"(?P<unit>day|week|fortnight|month|year|decade|wk|mo|mth|yr)s?"  # "2 wks", "3 mos", "2 yrs" as typed
_UNIT_WORDS = {"wk": "week", "mo": "month", "mth": "month", "yr": "year"}
_GAP = r"(?:\s+|(?<=\d))"  # "2 days", "2days"
# a unit counted in another: "a fortnight" is two weeks, "a decade" ten years
_IN_UNITS = {"fortnight": (2, "week"), "decade": (10, "year")}
# a verb in the past: the sentence a bare weekday ("on Sunday") is in tells which Sunday it was
# ("I'm tired", "so excited", "feel worried" are not: a word in -ed after a linking verb or an intensifier is an
# adjective; "need", "speed", "indeed", "hundred" are not verbs in the past at all)
_LINKED = "".join(rf"(?<!\b{w}\s)" for w in ("am", "is", "are", "be", "been", "being", "feel", "feels", "get", "gets",
                                               "getting", "so", "very", "too", "really", "quite", "'m", "'re", "'s", "’m",
                                               "’re", "’s"))
_PAST = re.compile(r"\b(?:was|were|did|had|went|got|came|saw|met|made|took|told|said|gave|ran|bought|left|found|"
                   r"felt|spent|began|won|lost|brought|caught|wrote|ate|drank|sang|swam|wore|flew|drove|rode|fell|"
                   r"broke|chose|spoke|stole|threw|knew|grew|drew|forgot|slept|kept|sent|built|paid|sold|heard|held|"
                   r"taught|thought|fought|sat|stood|woke|became|hid|shook|meant|lent|fed|led|sank|rang|" + _LINKED +
                   r"(?!(?:indeed|hundred|speed|breed|embed|proceed|succeed|exceed)\b)\w{3,}ed)\b", re.I)
_MONTH_WORDS = "|".join(_MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_MONTH = r"(?P<month>" + _MONTH_WORDS + r")\.?"
# A weekday in full or written short ("last Fri", "last Tues"); "sun" is left out: "the last sun" is weather.
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r"|mon|tues?|wed|thu(?:rs?)?|fri|sat)\b"
_FUTURE = re.compile(r"\b(?:will|'ll|going to|gonna|plan(?:ning)? to|planned|hope to|can't wait|excited to|"
                     r"looking forward|upcoming|next|soon|scheduled)\b", re.I)

# not a season or a day of a month whose year is named: "the summer of 2021", "May 2nd, 2021" are written already
_WITH_YEAR = r"(?!,?\s+(?:of\s+)?\d{4}\b)"
_DAYS_FROM = re.compile(r"(?:\bfrom\s+\w+|" + "|".join(_WEEKDAYS) + r")\s*$", re.I)  # before "until Friday"


def _md(n: int, th: str) -> str:  # "May 2nd" ("May 2" with th "?"), its groups numbered n
    return rf"(?P<month{n}>{_MONTH_WORDS})\.?\s+(?P<day{n}>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th){th}\b"


def _dm(n: int, th: str, of: str) -> str:  # "2nd of May", "2 May"
    return rf"(?P<day{n}>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th){th}\s+{of}(?P<month{n}>{_MONTH_WORDS})\b\.?"


# What an ordinal counts where it is not a day of the month: "on the 3rd floor", "on the 2nd try"
_COUNTED = ("floor|storey|story|time|try|attempt|go|place|round|lap|page|step|row|grade|level|day|week|month|year|"
            "anniversary|birthday|edition|season|episode|chapter|book|street|avenue|century|generation|quarter|hole|"
            "inning|leg|stage|stop|line|shelf|base|gear|draft|version|visit|date|floors|lesson|class|game|match|set")

# Most specific first: a match hides the shorter expressions inside it.
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("day_offset", r"\bthe day (?:before|b4) yesterday\b|\bthe day after tomorrow\b|\bthe night before last\b"),
    ("exact", _NUM + r"\s+" + _UNIT + r"\s+(?:(?P<back>ago)\s+today|from\s+today)\b"),
    # "a week from Friday", "ten days from Monday": counted on from the coming one
    ("from_weekday", _NUM + r"\s+(?P<unit>day|week)s?\s+(?:from|on)\s+" + _WEEKDAY),  # "a week on Friday" too
    # "at the end of the month", "by the start of the week", "mid-year" is not one: the week, month or year said in
    ("part_of", r"\b(?P<part>end|start|beginning|middle)\s+of\s+(?:the|this)\s+(?P<unit>week|month|year)\b"),
    # "a year ago this week": the week a year back, at the period named
    ("ago_period", _NUM + r"\s+" + _UNIT + r"\s+ago\s+(?:this|that)\s+(?P<period>week|month)\b"),
    ("ago", _NUM + _GAP + _UNIT + r"\s+(?:ago|back|earlier)\b"),
    ("weekends_ago", _NUM + r"\s+weekends?\s+(?:ago|back|earlier)\b"),
    ("since", _NUM + r"\s+(?P<unit>month|year)s?\s+(?:now|already)\b"),
    ("since", r"\bfor\s+the\s+(?:past|last)\s+" + _NUM + r"\s+(?P<unit>month|year)s?\b"),
    ("ahead", r"\b(?:in|within)\s+(?:the\s+next\s+)?" + _NUM + r"\s+" + _UNIT + r"(?:'?s)?\s*(?:time\b)?"),
    ("ahead", _NUM + r"\s+" + _UNIT + r"\s+from\s+(?:now|today)\b"),
    ("second", r"\bthe\s+(?P<unit>week|weekend|month|year)\s+(?P<dir>before\s+last|after\s+next)\b"),
    ("weekday_second", r"\bthe\s+" + _WEEKDAY + r"\s+(?P<dir>after\s+next|before\s+last)\b"),
    ("before_after", r"\bthe\s+(?P<unit>day|week|month|year|weekend)\s+(?P<dir>before|after)\b(?!\s+(?:the|a|an|my|our|his|her|their|\d))"),
    ("weekdays_ago", _NUM + r"\s+" + _WEEKDAY.replace(")\\b", ")s\\b") + r"\s+(?:ago|back)\b"),
    ("holiday", r"\b(?P<rel>last|this past|past|next|this coming|coming|this)\s+" + HOLIDAY),
    # "Friday week", "next Friday week": a week past the coming Friday
    ("weekday_week", r"(?<!\bthe\s)\b(?:next\s+)?" + _WEEKDAY + r"\s+week\b"),
    ("weekday", r"(?<!\bthe\s)\b(?P<rel>last|this past|past|next|nxt|this coming|coming|this)\s+" + _WEEKDAY),
    # "Monday next week", "Friday of this week": that day of that week
    ("weekday_of_week", r"\b" + _WEEKDAY + r"\s+(?:of\s+)?(?P<rel>next|last|this)\s+(?:week|wk)\b"),
    ("period", r"(?<!\bthe\s)(?<!\bthe\svery\s)\b(?P<rel>last|this past|past|next|nxt|this coming|coming|this|earlier this|later this)\s+"
               r"(?P<unit>week|weekend|month|year|wk)\b(?!\s+of\b)"),
    ("season", r"\b(?P<rel>last|this past|past|next|this coming|this)\s+(?P<season>spring|summer|autumn|fall|winter)\b"
               + _WITH_YEAR),
    # "on May 2nd", "by 28 September", "the 5th of July", "February 14th": a day of a month with no year
    ("month_day", r"\b(?:(?:on|by|until|till|since|before|after)\s+(?:the\s+)?(?:" + _md(1, "?") + "|"
                  + _dm(2, "?", r"(?:of\s+)?") + r")|(?:the\s+)?" + _dm(3, "", r"of\s+") + "|" + _md(4, "")
                  + r")(?!,?\s*\d)(?!['’]s)"),
    ("month", r"\b(?:(?:in|since|during|by|until|last|next|this|early|late|mid|mid-)\s+|mid-)" + _MONTH + r"(?!\s*\d)\b"),
    ("day_word", r"\b(?:yesterday|tomorrow|today|tonight|last night|this morning|this afternoon|this evening|yday|tmrw"
                 r"|tmr|tmrow)\b"),
    # "on Christmas Eve", "before Easter": as a bare weekday, by the sentence's tense
    ("on_holiday", r"\b(?:on|at|over|before|after|around|by|until)\s+" + HOLIDAY),
    ("over_weekend", r"\bover\s+the\s+weekend\b"),
    ("week_of_month", r"\b(?:the\s+)?(?P<ord>first|last)\s+(?P<unit>week|weekend)\s+of\s+" + _MONTH + r"(?!\s*\d)\b"),
    ("the_season", r"\b(?:over|during|in)\s+the\s+(?P<season>spring|summer|autumn|fall|winter)\b" + _WITH_YEAR),
    # in full: "on wed", "on sat" are words; "by Friday", "until Sunday" too, not "from Monday until Friday"
    ("on_weekday", r"\b(?:on|by|until|till)\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b(?!s)"),
    # "Friday night", "Monday morning": as "on Friday"
    ("on_weekday", r"\b(?P<weekday>" + "|".join(_WEEKDAYS) + r")\s+(?:morning|afternoon|evening|night)\b"),
    # "on the 3rd": a day of the month with no month named; not "on the 3rd floor", "on the 2nd of May"
    ("on_ordinal", r"\bon\s+the\s+(?P<ordinal>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b(?!\s*(?:of\b|-|(?:" + _MONTH_WORDS
                   + "|" + _COUNTED + r")s?\b))"),
)
_COMPILED = tuple((kind, re.compile(p, re.I)) for kind, p in _PATTERNS)


@dataclass(frozen=True)
class ResolvedDate:
    expression: str  # as written in the text
    start: int  # its place in the text
    end: int
    value: str  # what it means, at its precision ("7 May 2023", "the week of 1 May 2023", "June 2023", ...)
    day: date  # the first day it covers


def day_text(d: date) -> str:
    """A day as people write it and every reader parses: "7 May 2023"."""
    return f"{d.day} {_MONTHS[d.month - 1].capitalize()} {d.year}"


def _month_text(year: int, month: int) -> str:
    return f"{_MONTHS[month - 1].capitalize()} {year}"


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _count(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS.get(text, 1)


@lru_cache(maxsize=1)
def _dateparser():
    import dateparser  # imported on first use: it takes a moment to load its language data

    return dateparser


@lru_cache(maxsize=4096)
def _shift(said_on: date, n: int, unit: str, sign: int) -> date:
    """`said_on` moved `n` units back (sign -1) or ahead (+1), by dateparser (a millisecond a call: kept, since a
    conversation says the same few counts against the same day again and again)."""
    phrase = f"{n} {unit}s ago" if sign < 0 else f"in {n} {unit}s"
    base = datetime(said_on.year, said_on.month, said_on.day, 12, 0)
    parsed = _dateparser().parse(phrase, languages=["en"], settings={"RELATIVE_BASE": base})
    if parsed is None:  # not expected for these phrasings; computed here then
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n * sign
        return said_on + timedelta(days=days)
    return parsed.date()


def _at_precision(d: date, unit: str) -> tuple[str, date]:
    if unit == "year":
        return str(d.year), date(d.year, 1, 1)
    if unit == "month":
        return _month_text(d.year, d.month), date(d.year, d.month, 1)
    if unit == "week":
        return f"the week of {day_text(_monday(d))}", _monday(d)
    if unit == "weekend":
        saturday = _monday(d) + timedelta(days=5)
        return f"the weekend of {day_text(saturday)}", saturday
    return day_text(d), d


def _weekday_index(written: str) -> int:
    written = written.lower()
    return next(i for i, name in enumerate(_WEEKDAYS) if name.startswith(written[:3]))


def _relative(rel: str) -> int:
    rel = " ".join(rel.lower().split())
    if rel in ("last", "this past", "past"):
        return -1
    if rel in ("next", "this coming", "coming", "nxt"):
        return 1
    return 0


def _resolve(kind: str, m: re.Match, said_on: date, text: str) -> tuple[str, date] | None:
    g = m.groupdict()
    if g.get("unit"):
        g["unit"] = _UNIT_WORDS.get(g["unit"].lower(), g["unit"])
    if kind == "day_word":
        word = m.group(0).lower()
        offset = -1 if word in ("yesterday", "last night", "yday") else 1 if word.startswith(("tom", "tm")) else 0
        return _at_precision(said_on + timedelta(days=offset), "day")
    if kind == "day_offset":
        offset = 2 if "after" in m.group(0).lower() else -2  # "before", "b4"
        return _at_precision(said_on + timedelta(days=offset), "day")
    if kind == "since":  # "seven years now": since the year it began
        n = _count(g["n"])
        if n > 400:
            return None
        value, first = _at_precision(_shift(said_on, n, g["unit"].lower(), -1), g["unit"].lower())
        return f"since {value}", first
    if kind == "weekends_ago":  # "two weekends ago": the weekend that many before this week's
        return _at_precision(said_on - timedelta(days=7 * _count(g["n"])), "weekend")
    if kind == "on_ordinal":  # "on the 3rd": the latest such day in a sentence told in the past, else the next one
        day = _month_day(said_on, int(g["ordinal"]), not _told_in_past(text, m.start()))
        return _at_precision(day, "day") if day is not None else None
    if kind in ("ago", "ahead", "exact"):  # "exact": "a week ago today", "two months from today", that very day
        unit = g["unit"].lower()
        n = _count(g["n"])
        if n > 400:
            return None
        if unit in _IN_UNITS:  # "a fortnight ago": two weeks
            n, unit = n * _IN_UNITS[unit][0], _IN_UNITS[unit][1]
        moved = _shift(said_on, n, unit, -1 if kind == "ago" or g.get("back") else 1)
        return _at_precision(moved, "day" if kind == "exact" else unit)
    if kind == "second":  # "the week before last": two weeks back; "the month after next": two months on
        unit = g["unit"].lower()
        sign = 1 if "next" in g["dir"].lower() else -1
        if unit == "weekend":
            return _at_precision(said_on + timedelta(days=14 * sign), "weekend")
        return _at_precision(_shift(said_on, 2, unit, sign), unit)
    if kind == "weekday_second":  # "the Friday after next": a week past the coming one; "before last", before the last
        direction = 1 if "next" in g["dir"].lower() else -1
        return _at_precision(_weekday_from(said_on, _weekday_index(g["weekday"]), direction)
                             + timedelta(days=7 * direction), "day")
    if kind == "from_weekday":  # "a week from Friday": a week past the coming Friday
        n = _count(g["n"])
        if n > 400:
            return None
        coming = _weekday_from(said_on, _weekday_index(g["weekday"]), 1)
        return _at_precision(coming + timedelta(days=n * (7 if g["unit"].lower() == "week" else 1)), "day")
    if kind == "weekday_of_week":  # "Monday next week": the Monday of next week
        week = {"next": 7, "last": -7}.get(g["rel"].lower(), 0)
        return _at_precision(_monday(said_on) + timedelta(days=week + _weekday_index(g["weekday"])), "day")
    if kind == "weekday_week":  # "Friday week": a week past the coming Friday
        return _at_precision(_weekday_from(said_on, _weekday_index(g["weekday"]), 1) + timedelta(days=7), "day")
    if kind == "ago_period":  # "a year ago this week": the week that many back
        unit, n = g["unit"].lower(), _count(g["n"])
        if n > 400:
            return None
        if unit in _IN_UNITS:
            n, unit = n * _IN_UNITS[unit][0], _IN_UNITS[unit][1]
        return _at_precision(_shift(said_on, n, unit, -1), g["period"].lower())
    if kind == "part_of":  # "at the end of the month": the month it is said in
        return _at_precision(said_on, g["unit"].lower())
    if kind == "weekdays_ago":  # "two Saturdays ago": the Saturday that many back
        last = _weekday_from(said_on, _weekday_index(g["weekday"]), -1)
        return _at_precision(last - timedelta(days=7 * (_count(g["n"]) - 1)), "day")
    if kind == "holiday":
        direction = _relative(g["rel"])
        this_year = holiday_on(g["holiday"], said_on.year)
        if direction < 0:
            found = this_year if this_year < said_on else holiday_on(g["holiday"], said_on.year - 1)
        elif direction > 0:
            found = this_year if this_year > said_on else holiday_on(g["holiday"], said_on.year + 1)
        else:
            found = this_year  # "this Halloween": this year's
        return _at_precision(found, "day")
    if kind == "on_holiday":
        this_year = holiday_on(g["holiday"], said_on.year)
        if _told_in_past(text, m.start()):
            return _at_precision(this_year if this_year <= said_on else holiday_on(g["holiday"], said_on.year - 1), "day")
        return _at_precision(this_year if this_year >= said_on else holiday_on(g["holiday"], said_on.year + 1), "day")
    if kind == "over_weekend":  # "over the weekend": see _weekend_ahead
        if said_on.weekday() >= 5:
            return _at_precision(said_on, "weekend")
        return _at_precision(said_on + timedelta(days=0 if _weekend_ahead(text, m.start(), said_on) else -7), "weekend")
    if kind == "week_of_month":  # "the first week of May", "the last weekend of October"
        month = _month_index(g["month"])
        year = _month_year(month, "", text, m.start(), said_on)
        first, last = date(year, month, 1), date(year, month, monthrange(year, month)[1])
        unit = g["unit"].lower()
        if unit == "week":
            return _at_precision(first if g["ord"].lower() == "first" else last, "week")
        if g["ord"].lower() == "first":
            return _at_precision(first + timedelta(days=(5 - first.weekday()) % 7), "weekend")
        return _at_precision(last - timedelta(days=(last.weekday() - 5) % 7), "weekend")
    if kind == "the_season":  # "over the summer": the latest one in a sentence told in the past, else this or the next
        season = g["season"].lower()
        latest = date(said_on.year, _SEASONS[season], 1)
        if latest > said_on:
            latest = date(said_on.year - 1, _SEASONS[season], 1)
        if not _told_in_past(text, m.start()) and (said_on - latest).days >= 91:
            latest = date(latest.year + 1, _SEASONS[season], 1)
        return f"{season} {latest.year}", latest
    if kind == "on_weekday":  # "on Sunday": the last one in a sentence told in the past, else the coming one
        if not m.group(0).lower().startswith("on") and _DAYS_FROM.search(text, max(0, m.start() - 40), m.start()):
            return None  # "from Monday until Friday", "Monday till Friday": days of a week, not a day
        target = _weekday_index(g["weekday"])
        if _told_in_past(text, m.start()):
            day = said_on - timedelta(days=(said_on.weekday() - target) % 7)
        else:
            day = _weekday_from(said_on, target, 1)
        return _at_precision(day, "day")
    if kind == "before_after":
        unit = g["unit"].lower()
        sign = -1 if g["dir"].lower() == "before" else 1
        if unit == "weekend":
            return _at_precision(said_on + timedelta(days=7 * sign), "weekend")
        return _at_precision(_shift(said_on, 1, unit, sign), unit)
    if kind == "weekday":
        written = g["weekday"].lower()
        target = _weekday_index(written)
        direction = _relative(g["rel"])
        value, first = _at_precision(_weekday_from(said_on, target, direction), "day")
        # a weekday written short is named in full: "last Tues (Tuesday 18 July 2023)"
        return (value if written in _WEEKDAYS else f"{_WEEKDAYS[target].capitalize()} {value}"), first
    if kind == "period":
        unit = g["unit"].lower()
        rel = " ".join(g["rel"].lower().split())
        direction = 0 if rel in ("earlier this", "later this", "this") else _relative(rel)
        if unit == "weekend":
            if direction == 0:  # "this weekend": said on a weekend, that one; else the coming one
                return _at_precision(said_on if said_on.weekday() >= 5 else said_on + timedelta(days=5 - said_on.weekday()), "weekend")
            if direction < 0 and said_on.weekday() >= 5 and rel != "last":  # "this past weekend", on a Sunday
                return _at_precision(said_on, "weekend")
            return _at_precision(said_on + timedelta(days=7 * direction), "weekend")
        return _at_precision(_shift(said_on, 1, unit, direction) if direction else said_on, unit)
    if kind == "season":
        start = _SEASONS[g["season"].lower()]
        direction = _relative(g["rel"])
        year = said_on.year
        current = said_on.month >= start if start != 12 else said_on.month == 12
        if direction < 0:
            year = year if (current and said_on.month >= start + 3 and start != 12) else year - 1
        elif direction > 0:
            year = year + 1 if current or said_on.month > start else year
        season = g["season"].lower()
        return f"{season} {year}", date(year, start, 1)
    if kind == "month_day":  # "on May 2nd": the latest in a sentence told in the past, else the coming one
        n = next(i for i in "1234" if g[f"day{i}"])
        month, day, lead = _month_index(g[f"month{n}"]), int(g[f"day{n}"]), m.group(0).split()[0].lower()
        if _born(text, m.start()):
            return None
        past = not _ahead(lead, text, m.start())
        for year in range(said_on.year, said_on.year + (-9 if past else 9), -1 if past else 1):  # 29 February: 8 years
            found = date(year, month, day) if day <= monthrange(year, month)[1] else None
            if found is not None and (found == said_on or (found < said_on) == past):
                return _at_precision(found, "day")
        return None
    if kind == "month":
        month = _month_index(g["month"])
        lead = re.split(r"[\s-]", m.group(0), maxsplit=1)[0].lower()  # "mid-June": "mid"
        if lead in ("in", "during") and _born(text, m.start()):  # "I was born in March": no year can be told
            return None
        year = _month_year(month, lead, text, m.start(), said_on)
        return _month_text(year, month), date(year, month, 1)
    return None


_PLANNED = re.compile(r"\b(?:i'm|i am|we're|we are|they're|they are|he's|she's|you're|you are)\s+\w+ing\b", re.I)


def _weekend_ahead(text: str, at: int, said_on: date) -> bool:
    """Whether "over the weekend" said on a weekday is the coming weekend: not in a sentence told in the past; yes
    with a future word or a plan in the present ("I'm driving to Leeds"); otherwise the one nearer the day said
    ("Anything fun over the weekend?" on a Monday is the one just past, on a Friday the one ahead)."""
    if _told_in_past(text, at):
        return False
    sentence = _near(text, at)
    if _FUTURE.search(sentence) or _PLANNED.search(sentence):
        return True
    return said_on.weekday() >= 3


def _month_index(written: str) -> int:
    name = written.lower().rstrip(".")
    return _MONTHS.index(name) + 1 if name in _MONTHS else _MONTH_ABBR[name[:4] if name == "sept" else name[:3]]


def _ahead(lead: str, text: str, at: int) -> bool:
    """Whether a month or a day of a month named after `lead` (the word before it, lower case) is one to come:
    after "next", "by", "until" or "till"; not after "last" or "since"; otherwise unless told in the past."""
    return lead in ("next", "by", "until", "till") or (lead not in ("last", "since") and not _told_in_past(text, at))


def _month_year(month: int, lead: str, text: str, at: int, said_on: date) -> int:
    """The year of a month named with no year, after `lead` (the word before it, lower case, or ""): "since May" and
    "last May" are past, "by/until/next May" ahead; otherwise ahead unless told in the past ("My birthday is in June",
    "Classes start in September": a month said in the present is the coming one)."""
    future = _ahead(lead, text, at)
    if lead == "this" or month == said_on.month:
        return said_on.year
    if future:
        return said_on.year if month > said_on.month else said_on.year + 1
    return said_on.year if month < said_on.month else said_on.year - 1


def _weekday_from(said_on: date, target: int, direction: int) -> date:
    """The weekday `target` (Monday 0) last (direction < 0: the latest before the day said), next (> 0: the first
    after it) or this week (0)."""
    if direction < 0:
        return said_on - timedelta(days=(said_on.weekday() - target) % 7 or 7)
    if direction > 0:
        return said_on + timedelta(days=(target - said_on.weekday()) % 7 or 7)
    return _monday(said_on) + timedelta(days=target)


def _month_day(said_on: date, day: int, forward: bool) -> date | None:
    """The `day` of a month nearest the day said: the latest on or before it, or (`forward`) the first on or after
    it; None for a day no month has."""
    if not 1 <= day <= 31:
        return None
    year, month = said_on.year, said_on.month
    for _ in range(13):
        try:
            found = date(year, month, day)
        except ValueError:
            found = None
        if found is not None and (found >= said_on if forward else found <= said_on):
            return found
        month += 1 if forward else -1
        year, month = (year + (month - 1) // 12, (month - 1) % 12 + 1)
    return None


def _near(text: str, at: int) -> str:
    """The sentence at `at`, at most 200 characters each side (bounded: a text of many dates stays linear)."""
    start, end = _bounds(text, at)
    return text[max(start, at - 200):min(end, at + 200)]


def _born(text: str, at: int) -> bool:
    """Whether the sentence at `at` tells of a birth ("I was born in March"): its month or day has no year to guess."""
    return re.search(r"\bborn\b", _near(text, at), re.I) is not None


def _told_in_past(text: str, at: int) -> bool:
    """Whether the sentence at `at` is told in the past (a verb in the past, no word of the future)."""
    return _past_between(text, *_bounds(text, at))


@lru_cache(maxsize=1024)
def _past_between(text: str, start: int, end: int) -> bool:
    """`_told_in_past` of the sentence text[start:end], read once however many dates it holds (read each time, a long
    sentence of dates was quadratic: 4.5 s for 3,000 of "in June")."""
    return not _FUTURE.search(text, start, end) and bool(_PAST.search(text, start, end))


def _titled(expression: str) -> bool:
    """An expression whose every word is written with a capital, three of them after the first ("The Day After
    Tomorrow"): a title. (A sentence's first word has one anyway, and a holiday's name: "On Christmas Eve".)"""
    words = re.findall(r"[^\W\d_]+", expression)
    return len(words) >= 4 and all(w[0].isupper() for w in words)


def _in_title(text: str, start: int, end: int) -> bool:
    """An expression written with a capital inside a sentence and followed by another capitalised word ("The
    Tomorrow People was my favourite show"): part of a name or a title. (A weekday, a month or a holiday has its
    capital anyway: the expression must open with a word that has none of its own.)"""
    said = text[start:end]
    if not said[:1].isupper() or not _LOWER_OPENING.match(said):
        return False
    last = start  # the last character said before it, past the blanks (a copy of all before it was quadratic)
    while last > 0 and text[last - 1].isspace():
        last -= 1
    if last == 0 or text[last - 1] in ".!?:\"'“(-–—" or text[start - 1:start] == "\n":
        return False
    return bool(re.match(r"\s+[A-Z]", text[end:]))


_LOWER_OPENING = re.compile(r"(?:tomorrow|yesterday|today|tonight|next|last|this|two|three|a|the)\b", re.I)


@lru_cache(maxsize=8)
def _marks(text: str) -> list[int]:
    """Where the sentences of `text` end (its ".", "!" and "?"), found once a text."""
    return [m.start() for m in _SENTENCE_MARK.finditer(text)]


_SENTENCE_MARK = re.compile(r"[.!?]")


def _bounds(text: str, at: int) -> tuple[int, int]:
    """The sentence at `at`: from after the last mark before it to the first mark at or after it."""
    marks = _marks(text)
    i = bisect_left(marks, at)
    return (marks[i - 1] + 1 if i else 0), (marks[i] if i < len(marks) else len(text))


def _in_language(text: str, said_on: date) -> list[tuple[int, int, tuple[str, date]]]:
    """The expressions of a text that reads as Portuguese, Spanish, German, French, Italian or Dutch
    (`text.date_words`), as (start, end, (value, first day)); none for any other text."""
    found = []
    for lang in date_words.languages(text):
        found += _found_in(lang, text, said_on)
    return found


def _found_in(lang: str, text: str, said_on: date) -> list[tuple[int, int, tuple[str, date]]]:
    days, ago, periods = date_words.compiled(lang)
    found = []
    for pattern, offset in days:
        found += [(m.start(), m.end(), _at_precision(said_on + timedelta(days=offset), "day"))
                  for m in pattern.finditer(text)]
    for pattern, direction in ago:  # counts back and ahead
        for m in pattern.finditer(text):
            n, unit = date_words.count(lang, m.group("n")), date_words.unit(lang, m.group("unit"))
            if n is not None and unit is not None and n <= 400:
                found.append((m.start(), m.end(), _at_precision(_shift(said_on, n, unit, direction), unit)))
    for pattern, direction in periods:
        for m in pattern.finditer(text):
            if (unit := date_words.unit(lang, m.group("unit"))) is not None:
                found.append((m.start(), m.end(), _at_precision(_shift(said_on, 1, unit, direction), unit)))
    for pattern, direction in date_words.weekday_periods(lang):
        for m in pattern.finditer(text):
            found.append((m.start(), m.end(), _at_precision(_weekday_from(said_on, date_words.weekday(
                lang, m.group("weekday")), direction), "day")))
    return found


def resolve_dates(text: str, said_on: date | datetime) -> list[ResolvedDate]:
    """The relative time expressions of `text`, in order, each with the absolute date it means when said on
    `said_on`. Expressions that do not overlap; none for a text without any."""
    if isinstance(said_on, datetime):
        said_on = said_on.date()
    if not isinstance(text, str) or not text:
        return []
    taken = Spans()
    found: list[ResolvedDate] = []
    for kind, pattern in _COMPILED:
        for m in pattern.finditer(text):
            start, end = m.span()
            if taken.overlaps(start, end):
                continue
            holiday = m.groupdict().get("holiday")  # "On April Fools' Day": a holiday's name has its capitals
            if (not holiday and _titled(m.group(0))) or _in_title(text, start, end):  # a title: nothing in it is read
                taken.add(start, end)
                continue
            try:
                resolved = _resolve(kind, m, said_on, text)
            except (ValueError, OverflowError):  # a date out of range: left as written
                resolved = None
            if resolved is None:
                continue
            expression = m.group(0).rstrip()
            taken.add(start, start + len(expression))
            found.append(ResolvedDate(expression, start, start + len(expression), resolved[0], resolved[1]))
    for start, end, resolved in sorted(_in_language(text, said_on), key=lambda f: (f[0], -f[1])):
        if not taken.overlaps(start, end):
            taken.add(start, end)
            found.append(ResolvedDate(text[start:end], start, end, resolved[0], resolved[1]))
    return sorted(found, key=lambda r: r.start)


def annotate(text: str, said_on: date | datetime, resolved: list[ResolvedDate] | None = None) -> str:
    """`text` with the absolute date written after each relative expression: "yesterday (7 May 2023)"."""
    resolved = resolve_dates(text, said_on) if resolved is None else resolved
    out, last = [], 0
    for r in resolved:
        out.append(text[last:r.end])
        out.append(f" ({r.value})")
        last = r.end
    out.append(text[last:])
    return "".join(out)


__all__ = ["ResolvedDate", "resolve_dates", "annotate", "day_text"]
