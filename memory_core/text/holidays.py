"""Holidays a date can be told by ("last Christmas", "on Easter Sunday", "next Valentine's Day"), for `text.dates`:
their names as written and the day each falls on in a year."""

from __future__ import annotations

import re
from datetime import date, timedelta

# holidays on a fixed day (apostrophes left out: "New Year's Eve", "new years eve" and "New Year’s Eve" alike)
HOLIDAYS = {"christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
            "new years eve": (12, 31), "new years day": (1, 1), "halloween": (10, 31), "valentines day": (2, 14),
            "valentines": (2, 14), "boxing day": (12, 26), "st patricks day": (3, 17), "april fools day": (4, 1),
            "independence day": (7, 4), "bastille day": (7, 14), "guy fawkes night": (11, 5), "bonfire night": (11, 5)}
# holidays whose day is computed for each year (`holiday_on`)
MOVEABLE = ("easter sunday", "easter", "thanksgiving day", "thanksgiving")
# as written: "New Year's Day", "valentines", "April Fools' Day", "St. Patrick's Day"
HOLIDAY = r"(?P<holiday>" + "|".join(sorted((re.sub(r"^st ", r"st\\.? ", re.sub(r"(year|valentine|patrick|fool)s\b",
                                                                               r"\1['’]?s['’]?", h))
                                             for h in (*HOLIDAYS, *MOVEABLE)), key=len, reverse=True)) + r")\b"


def holiday_on(written: str, year: int) -> date:
    """The day of a holiday as written ("New Year's Day", "valentines", "Easter") in `year`: Easter Sunday by
    dateutil's Western computation, Thanksgiving the fourth Thursday of November (the United States')."""
    name = " ".join(re.sub(r"['’.]", "", written.lower()).split())
    if name.startswith("easter"):
        from dateutil.easter import easter

        return easter(year)
    if name.startswith("thanksgiving"):
        first = date(year, 11, 1)
        return first + timedelta(days=(3 - first.weekday()) % 7 + 21)
    month, day = HOLIDAYS[name]
    return date(year, month, day)


__all__ = ["HOLIDAY", "HOLIDAYS", "MOVEABLE", "holiday_on"]
