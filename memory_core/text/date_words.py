"""Relative time expressions in Portuguese, Spanish, German, French, Italian and Dutch, for `text.dates`.

Each language gives its words for the days around the day said ("ontem", "vorgestern", "après-demain"), a count
back ("hace tres días", "vor zwei Wochen", "il y a trois jours", "due settimane fa", "drie dagen geleden") and
the last or next week, month or year ("la semana pasada", "le mois prochain", "vorig jaar") or weekday ("el próximo
lunes", "letzten Freitag", "samedi dernier"). A language's words are
read only in a text that reads as that language (`languages`: the most of its common words): German and Dutch
"hier" is "here", Spanish "mañana" also "morning", German "Morgen" also "morning".
"""

from __future__ import annotations

import re
from functools import lru_cache

UNITS = {  # a unit word (singular or plural) -> day, week, month or year
    "pt": {"dia": "day", "dias": "day", "semana": "week", "semanas": "week", "mês": "month", "mes": "month",
           "meses": "month", "ano": "year", "anos": "year"},
    "es": {"día": "day", "dia": "day", "días": "day", "dias": "day", "semana": "week", "semanas": "week",
           "mes": "month", "meses": "month", "año": "year", "años": "year"},
    "de": {"tag": "day", "tagen": "day", "tage": "day", "woche": "week", "wochen": "week", "monat": "month",
           "monaten": "month", "monate": "month", "jahr": "year", "jahren": "year", "jahre": "year"},
    "fr": {"jour": "day", "jours": "day", "semaine": "week", "semaines": "week", "mois": "month", "an": "year",
           "ans": "year", "année": "year", "années": "year"},
    "it": {"giorno": "day", "giorni": "day", "settimana": "week", "settimane": "week", "mese": "month",
           "mesi": "month", "anno": "year", "anni": "year"},
    "nl": {"dag": "day", "dagen": "day", "week": "week", "weken": "week", "maand": "month", "maanden": "month",
           "jaar": "year", "jaren": "year"},
}
NUMBERS = {
    "pt": {"um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "tres": 3, "quatro": 4, "cinco": 5, "seis": 6,
           "sete": 7, "oito": 8, "nove": 9, "dez": 10, "alguns": 3, "algumas": 3, "uns": 3, "umas": 3},
    "es": {"un": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
           "nueve": 9, "diez": 10, "unos": 3, "unas": 3, "algunos": 3, "algunas": 3},
    "de": {"einem": 1, "einer": 1, "ein": 1, "eine": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6,
           "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "ein paar": 3, "einigen": 3, "wenigen": 3},
    "fr": {"un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8,
           "neuf": 9, "dix": 10, "quelques": 3},
    "it": {"un": 1, "uno": 1, "una": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7,
           "otto": 8, "nove": 9, "dieci": 10, "qualche": 3, "alcuni": 3, "alcune": 3},
    "nl": {"een": 1, "één": 1, "twee": 2, "drie": 3, "vier": 4, "vijf": 5, "zes": 6, "zeven": 7, "acht": 8,
           "negen": 9, "tien": 10, "een paar": 3, "enkele": 3},
}
# Words for the day said and the days around it: (pattern, offset in days).
DAYS = {
    "pt": ((r"depois de amanhã", 2), (r"anteontem", -2), (r"ontem", -1), (r"amanhã", 1), (r"hoje", 0)),
    "es": ((r"pasado mañana", 2), (r"anteayer|antier", -2), (r"ayer", -1),
           (r"(?<!la )(?<!esta )(?<!una )(?<!cada )mañana(?! por la)", 1), (r"hoy", 0)),
    "de": ((r"übermorgen", 2), (r"vorgestern", -2), (r"gestern", -1),
           (r"(?<!guten )(?<!am )(?<!jeden )(?<!heute )(?<!diesen )(?<!den )(?<!der )(?<!dem )(?<!einen )morgen", 1),
           (r"heute", 0)),
    "fr": ((r"après-demain", 2), (r"avant-hier", -2), (r"hier", -1), (r"demain", 1), (r"aujourd'hui|aujourd’hui", 0)),
    "it": ((r"dopodomani", 2), (r"l'altro ieri|l’altro ieri|altroieri|avantieri", -2), (r"ieri", -1),
           (r"domani", 1), (r"oggi", 0)),
    "nl": ((r"overmorgen", 2), (r"eergisteren", -2), (r"gisteren", -1), (r"(?<!goede )morgen", 1), (r"vandaag", 0)),
}
LANGUAGES = tuple(DAYS)
# A count back: a pattern with the groups n (a number, in digits or words) and unit.
AGO = {
    "pt": (r"há\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)", r"(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)\s+atrás"),
    "es": (r"hace\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)",),
    "de": (r"vor\s+(?P<n>\d{1,3}|ein paar|\w+)\s+(?P<unit>\w+)",),
    "fr": (r"il y a\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)",),
    "it": (r"(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)\s+fa",),
    "nl": (r"(?P<n>\d{1,3}|een paar|\w+)\s+(?P<unit>\w+)\s+geleden",),
}
# A count ahead ("dans deux jours", "tra due giorni", "in zwei Tagen"): the same groups.
AHEAD = {
    "pt": (r"(?:daqui\s+a|dentro\s+de)\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)",),
    "es": (r"(?:dentro\s+de|en)\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)",),
    "de": (r"in\s+(?P<n>\d{1,3}|ein paar|\w+)\s+(?P<unit>\w+)",),
    "fr": (r"dans\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)",),
    "it": (r"(?:tra|fra)\s+(?P<n>\d{1,3}|\w+)\s+(?P<unit>\w+)",),
    "nl": (r"(?:over|binnen)\s+(?P<n>\d{1,3}|een paar|\w+)\s+(?P<unit>\w+)",),
}
# The last or next week, month or year: (pattern with the group unit, direction).
PERIODS = {
    "pt": ((r"(?P<unit>semana|mês|ano)\s+(?:passad[oa])", -1), (r"(?P<unit>semana|mês|ano)\s+que\s+vem", 1),
           (r"próxim[oa]\s+(?P<unit>semana|mês|ano)", 1), (r"(?P<unit>semana|mês|ano)\s+próxim[oa]", 1)),
    "es": ((r"(?P<unit>semana|mes|año)\s+pasad[oa]", -1), (r"(?P<unit>semana|mes|año)\s+que\s+viene", 1),
           (r"próxim[oa]\s+(?P<unit>semana|mes|año)", 1), (r"(?P<unit>semana|mes|año)\s+próxim[oa]", 1)),
    "de": ((r"(?:letzte[nsr]?|vorige[nsr]?|vergangene[nsr]?)\s+(?P<unit>woche|monat|jahr)", -1),
           (r"(?:nächste[nsr]?|kommende[nsr]?)\s+(?P<unit>woche|monat|jahr)", 1)),
    "fr": ((r"(?P<unit>semaine|mois|année|an)\s+derni(?:er|ère)", -1), (r"(?P<unit>semaine|mois|année|an)\s+passée?", -1),
           (r"(?P<unit>semaine|mois|année|an)\s+prochaine?", 1)),
    "it": ((r"(?P<unit>settimana|mese|anno)\s+scors[oa]", -1), (r"(?P<unit>settimana|mese|anno)\s+passat[oa]", -1),
           (r"(?P<unit>settimana|mese|anno)\s+prossim[oa]", 1), (r"prossim[oa]\s+(?P<unit>settimana|mese|anno)", 1)),
    "nl": ((r"(?:vorige|vorig|afgelopen)\s+(?P<unit>week|maand|jaar)", -1),
           (r"(?:volgende|volgend|komende|komend)\s+(?P<unit>week|maand|jaar)", 1)),
}
# The days of the week, Monday first (a day's words: its names, with or without an accent or "-feira").
WEEKDAYS = {
    "pt": ("segunda(?:-feira)?", "terça(?:-feira)?|terca(?:-feira)?", "quarta(?:-feira)?", "quinta(?:-feira)?",
           "sexta(?:-feira)?", "sábado|sabado", "domingo"),
    "es": ("lunes", "martes", "miércoles|miercoles", "jueves", "viernes", "sábado|sabado", "domingo"),
    "de": ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag|sonnabend", "sonntag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "it": ("lunedì|lunedi", "martedì|martedi", "mercoledì|mercoledi", "giovedì|giovedi", "venerdì|venerdi", "sabato",
           "domenica"),
    "nl": ("maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"),
}
# The last or next such day: (pattern with {day} where a weekday's words go, direction).
WEEKDAY_PERIODS = {
    "pt": ((r"{day}\s+passad[oa]", -1), (r"{day}\s+que\s+vem", 1), (r"próxim[oa]\s+{day}", 1),
           (r"{day}\s+próxim[oa]", 1)),
    "es": ((r"{day}\s+pasado", -1), (r"{day}\s+que\s+viene", 1), (r"próximo\s+{day}", 1), (r"{day}\s+próximo", 1)),
    "de": ((r"(?:letzte[nsr]?|vorige[nsr]?|vergangene[nsr]?)\s+{day}", -1),
           (r"(?:nächste[nsr]?|kommende[nsr]?)\s+{day}", 1)),
    "fr": ((r"{day}\s+derniers?", -1), (r"{day}\s+passés?", -1), (r"{day}\s+prochains?", 1)),
    "it": ((r"{day}\s+scors[oa]", -1), (r"{day}\s+passat[oa]", -1), (r"{day}\s+prossim[oa]", 1),
           (r"prossim[oa]\s+{day}", 1)),
    "nl": ((r"(?:vorige|afgelopen)\s+{day}", -1), (r"(?:volgende|komende)\s+{day}", 1)),
}
# Common words by which a text reads as a language (English among them, so that an English text is left alone).
_MARKERS = {
    "en": "the a an and i i'm i've we you he she it is was were are to of in on at my our with for have had this that",
    "pt": "o os as um uma e é eu foi fui na no nos nas da do das dos de que com para por muito minha meu não estou tenho",
    "es": "el los las un una y es yo fue fui en la lo del de que con para por muy mi mis no estoy tengo al me hoy ayer",
    "de": "der die das und ist ich war bin habe hat ein eine einen zu mit nicht auch im am vom zum mein meine wir es",
    "fr": "le la les un une et est je j' suis été ai au aux du des de que avec pour pas très mon ma mes nous il elle "
          "m' l' c' n' s' d' qu' soir matin",
    "it": "il lo la i gli le un una e è io sono ho ha al del della di che con per non molto mio mia ci siamo",
    "nl": "de het een en is ik was ben heb heeft met voor niet ook op mijn we wij er zijn van naar dat",
}
# a language's unit and number words count too: "Há duas semanas comecei a correr" has no other
_MARKER_SETS = {lang: frozenset(words.split()) | frozenset(UNITS.get(lang, ())) | frozenset(NUMBERS.get(lang, ()))
                for lang, words in _MARKERS.items()}
_TOKEN = re.compile(r"[^\W\d_]+'?", re.UNICODE)


def languages(text: str) -> list[str]:
    """The languages of the six above that `text` may read as: those with the most of their common words in it, at
    least one and no fewer than English's (a short text can tie: "Vorige week was ik in Gent" has as many English
    words as Dutch ones); none for a text that reads as English or as none of them."""
    tokens = [t.casefold() for t in _TOKEN.findall(text)]
    counts = {lang: sum(t in words or t.rstrip("'") in words for t in tokens) for lang, words in _MARKER_SETS.items()}
    best = max(counts[lang] for lang in LANGUAGES)
    return [lang for lang in LANGUAGES if counts[lang] == best and best >= max(1, counts["en"])]


@lru_cache(maxsize=None)
def weekday_periods(lang: str) -> list[tuple[re.Pattern, int]]:
    """The language's last or next weekday patterns, compiled once; each names its day in the group `weekday`."""
    day = "(?P<weekday>" + "|".join(WEEKDAYS[lang]) + ")"
    return [(re.compile(rf"(?<![\w-]){p.format(day=day)}(?![\w-])", re.I | re.UNICODE), direction)
            for p, direction in WEEKDAY_PERIODS[lang]]


def weekday(lang: str, word: str) -> int:
    """Monday 0 .. Sunday 6 of a weekday's word in `lang`."""
    word = word.casefold()
    return next(i for i, names in enumerate(WEEKDAYS[lang]) if re.fullmatch(names, word))


@lru_cache(maxsize=None)
def compiled(lang: str) -> tuple[list[tuple[re.Pattern, int]], list[tuple[re.Pattern, int]], list[tuple[re.Pattern, int]]]:
    """The language's day words, counts back and ahead (with their direction) and periods, compiled once."""
    flags = re.I | re.UNICODE
    days = [(re.compile(rf"(?<![\w-])(?:{p})(?![\w-])", flags), offset) for p, offset in DAYS[lang]]
    ago = [(re.compile(rf"(?<![\w-]){p}(?![\w-])", flags), direction)
           for patterns, direction in ((AGO[lang], -1), (AHEAD[lang], 1)) for p in patterns]
    periods = [(re.compile(rf"(?<![\w-]){p}(?![\w-])", flags), direction) for p, direction in PERIODS[lang]]
    return days, ago, periods


def count(lang: str, word: str) -> int | None:
    word = " ".join(word.casefold().split())
    return int(word) if word.isdigit() else NUMBERS[lang].get(word)


def unit(lang: str, word: str) -> str | None:
    return UNITS[lang].get(word.casefold())

