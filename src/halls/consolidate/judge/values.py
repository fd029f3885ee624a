"""Values written one way (pure): what the judge compares a statement's numbers by.

People write one value many ways: "108 cm" and "a hundred and eight
centimetres", "16GB" and "sixteen gigs", "€1,150" and "1150 euros", "6pm",
"6 p.m." and "18:00", "half past nine" and "9:30", "every two weeks" and
"biweekly", "March 3rd" and "the third of March" ("March 3"), "60k" and "60,000",
"pg14" and "pg 14", "2x a day" and "twice daily", "Sept" and "September",
"14/03" and "March 14", "0630" and "6:30". ``normalise`` rewrites a
statement so that each value has one spelling, and the judge's word
comparison sees the same value as the same words (and a changed value as
another). It is English only and reads nothing but the text.

A value in another unit of the same measure ("12 km" and "7.5 miles", "90
minutes" and "1.5 hours", "1 gbps" and "1000 mbps") keeps its own words:
``amount`` gives each its size in one base unit, and the judge compares two
statements' amounts (``same_amount``) within ``TOLERANCE``, as people round
when they convert.

What it does not do, on purpose: read "one" alone as a number (it is mostly
a pronoun: "the one I use"), or read "first"/"second" as ordinals ("first
language", "a second car"). "Every day" stays as written (mostly a habit,
not a schedule's value).
"""

from __future__ import annotations

import re

from halls.consolidate.judge.lexicon import alternation, number, table

SMALL = {w: int(n) for w, n in table("small").items()}
TENS = {w: int(n) for w, n in table("tens").items()}
SCALES = {w: int(n) for w, n in table("scales").items()}
# ("first" and "second" are left out: see above.)
ORDINALS = {w: int(n) for w, n in table("ordinals").items()}
ORDINALS |= {w[:-1] + "ieth": n for w, n in TENS.items()}  # twentieth .. ninetieth
_ORDINAL_ONES = {"first": 1, "second": 2} | {w: n for w, n in ORDINALS.items() if n < 10}

# A unit after a number, however written, is one lower-case word (so "GB" is
# no name, and "16GB", "16 GB" and "sixteen gigs" are the same words).
UNITS = {w: unit for unit, names in table("units").items() for w in (unit, *names.split())}
# The units ``normalise`` writes that measure one thing in several sizes: the
# measure, and the size in its base unit. (Not money: a rate of exchange
# changes; nor degrees, nor pounds of weight, whose "pound" is also money.)
MEASURES = {
    unit: (measure, number(size))
    for unit, (measure, size) in ((u, v.split()) for u, v in table("sizes").items())
}
# How far apart two amounts in two units may be and still be one value: people
# round when they convert ("12 km" is 7.46 miles, written "7.5 miles"; "5 km"
# is 3.1 miles, written "3 miles").
TOLERANCE = 0.05


def amount(number: float, unit: str) -> tuple[str, float] | None:
    """A number of a unit ``normalise`` writes ("km", "minute") as its measure and its
    size in that measure's base unit; None for any other unit."""
    measure = MEASURES.get(unit)
    return None if measure is None else (measure[0], number * measure[1])


def same_amount(first: tuple[str, float], second: tuple[str, float]) -> bool:
    """Two amounts of one measure within ``TOLERANCE`` of each other."""
    (measure, x), (other, y) = first, second
    return measure == other and abs(x - y) <= TOLERANCE * max(abs(x), abs(y))


# Units read only glued to their number: "21C" is 21 degrees, "Python 3 C" is no temperature.
_GLUED_ONLY = table("glued_units")
_CURRENCY = table("currency")
# A currency named before its amount ("EUR 1450", "USD 20") is the amount in it.
_CODE_MONEY = re.compile(r"\b(EUR|USD|GBP|euros?|dollars?|pounds?)\s?(\d+(?:\.\d+)?)\b", re.I)
# "21°C", "21 °C" and "21 degrees" are one value ("degree"; Fahrenheit is rare
# enough in notes to be left as written).
_DEGREES = re.compile(r"\s?°\s?C?\b")
# "Pounds" after a number is money, unless weight is spoken of ("weighs 48
# pounds", "lost 10 pounds"): then it is the mass ("lb").
_WEIGHT = re.compile(r"\b(?:weigh\w*|scales?|heav\w+|lighter|lost|gained|pounds? of)\b", re.I)
_POUNDS = re.compile(r"(?<=\d)(\s?)pounds?\b", re.IGNORECASE)
# A day of the month said as an ordinal ("the first of every month", "on the
# first of March") is its number; "first" alone stays ("first language").
_HALF_DOZEN = re.compile(r"\bhalf\s+a\s+dozen\b", re.IGNORECASE)
_FIRST_OF = re.compile(r"\b(the\s+)(first|second)(\s+of\b)", re.IGNORECASE)
# A number written in groups ("0171 555 2231", "0171-555-2231", "+49 151 2345
# 6789"), a phone number mostly, is one number: its digits. An ISO date
# ("2024-05-12") stays a date.
_GROUPED = re.compile(r"(?<![\d:.])\+?\d{2,}(?:[ -]\d{2,}){1,5}(?![\d:.]\d)")
_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_YEARS = re.compile(r"(?:19|20)\d\d[ -](?:19|20)\d\d")  # "2019-2020" is two years
MIN_GROUPED = 7  # digits: fewer are two numbers ("rooms 12 14")
MIN_SPELT = 3  # digits said one by one that are one number ("extension four four one seven")

# A cadence is one word however written: "every two weeks", "every other
# week" and "fortnightly" are "biweekly"; "once a month" and "each month" are
# "monthly" (so a cadence that changes is another word, not another number).
_EVERY = r"\b(?:every|each|once (?:a|an|per|every))\s+"
_FORTNIGHT = r"\b(?:every (?:two|2|other|second) weeks?|(?:once )?(?:a|every) fortnight|"
_FORTNIGHT += r"fortnightly|bi-weekly)\b"
# Every second day however written: "every other day", "on alternate days".
_ALTERNATE_DAYS = r"\b(?:(?:on\s+)?every (?:other|second|2nd) day|(?:on\s+)?alternate days)\b"
_CADENCE = tuple(
    (re.compile(pattern, re.IGNORECASE), word)
    for pattern, word in (
        (_FORTNIGHT, "biweekly"),
        (_ALTERNATE_DAYS, "every 2 days"),
        (_EVERY + r"hour\b", "hourly"),
        (_EVERY + r"night\b", "nightly"),
        (_EVERY + r"week\b", "weekly"),
        (_EVERY + r"month\b", "monthly"),
        (_EVERY + r"quarter\b", "quarterly"),
        (r"(?:" + _EVERY + r"year\b|\bannually\b)", "yearly"),
    )
)
# ... and so is an amount "a month" or "per week" ("€1,150 a month",
# "3 times a week"); "in a month" or "a week ago" is no cadence.
_PER = re.compile(
    rf"(\d\S*\s+(?:(?:{'|'.join(sorted(UNITS, key=len, reverse=True))})\s+)?|\btwice\s+|\btimes\s+)"
    r"(?:a|an|per)\s+"
    r"(hour|night|week|month|quarter|year)\b",
    re.IGNORECASE,
)
# "A day" after an amount is "daily" too ("twice a day", "2x per day", "10
# cigarettes a day", "5 mg/day"); "a day off", "in a day" keep their words.
_PER_DAY = re.compile(
    r"((?:\d\S*|\btwice|\bonce|\btimes)(?:\s+[a-z]+)?\s+)(?:a|per)\s+day\b(?!\s+(?:off|trip|pass)\b)",
    re.IGNORECASE,
)
# "2x a day", "1x daily": so many times.
_TIMES = re.compile(r"\b([1-9])x(?=\s+(?:a|an|per|each|every|daily|weekly|monthly|yearly)\b)")
_TIMES_WORDS = {str(int(number(n))): w for w, n in table("times").items()}  # "2" -> "twice"
_ADVERB = table("adverbs")
# ... or after a slash, as a price is noted ("$1,850/mo", "20 EUR/month", "$15/hr").
_SLASH_ADVERB = table("slash_adverbs")
# A rate per minute or second has no adverb: "300/min" is "300 per minute",
# "req/min" "req per minute".
_SLASH_RATE = re.compile(r"(?<=\w)\s?/\s?(min|minute|s|sec|second)\b", re.IGNORECASE)
_RATE_UNITS = table("rate_units")
_SLASH_ADVERB |= {unit: adverb for unit, adverb in _ADVERB.items() if unit != "night"}
_SLASH_PER = re.compile(
    rf"(\d[\d.]*(?: (?:euro|dollar|pound))?)\s?/\s?({'|'.join(_SLASH_ADVERB)})\b", re.IGNORECASE
)
# A share: "6.8%", "6.8 %" and "6.8 per cent" are "6.8 percent".
_PERCENT = re.compile(r"(?<=\d)\s?%|\bper cent\b", re.IGNORECASE)
# A version's "v" ("node v20", "postgres v15", "v2.1") is no part of its number.
_VERSION = re.compile(r"\bv(?=\d+(?:\.\d+)*\b)")
# A name glued to its number ("pg14", "python3.12", "COVID-19") is the name and
# the number, as "Postgres 14" is. One letter is left glued ("B12", "i7", "S3"
# name one thing each), and so is a longer word: "bluefinch42" is a handle.
_NAMED_NUMBER = re.compile(r"(?<![\w-])([A-Za-z]{2,6})-?(\d+(?:\.\d+)*)\b")
# A number in thousands ("60k", "1.5K", "$2k") is that number: "60k miles" is
# "60000 miles" (a "4K" screen too: both statements read it alike).
_KILO = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[kK]\b")
# The working week however written ("Mon-Fri", "Monday to Friday", "M-F",
# "every weekday", "each workday", "on working days"): "weekdays". (One
# "workday" alone is a length of time: "an 8-hour workday".)
_WORKWEEK = re.compile(
    r"\b(?:mon(?:day)?|m)\s?(?:-|–|to|through|thru)\s?(?:fri(?:day)?|f)\b"
    r"|\b(?:every|each)\s+(?:week|work(?:ing)?\s?)day\b|\bwork(?:ing)?\s?days\b",
    re.IGNORECASE,
)
_NUMBER_WORD = "|".join(sorted([*SMALL, *TENS, *SCALES], key=len, reverse=True))
# A run of number words ("a hundred and eight", "thirty-two", "five hundred").
_NUMBER_RUN = re.compile(
    rf"\b(?:an?\s+(?=(?:{'|'.join(SCALES)})\b))?(?:{_NUMBER_WORD})"
    rf"(?:(?:\s+and\s+|[\s-]+)(?:{_NUMBER_WORD}))*\b",
    re.IGNORECASE,
)
# ("a third" of something, or "cut by a third", is a share; "a fourth grader" an ordinal.)
_ORDINAL_WORD = "|".join(sorted([*ORDINALS, *_ORDINAL_ONES], key=len, reverse=True))
_ORDINAL = re.compile(
    rf"(?:(?<!\ba )(?<!\bone )|(?=\w+\s+(?!of\b)[a-z]))"
    rf"\b(?:(?:{'|'.join(TENS)})-)?(?:{_ORDINAL_WORD})\b",
    re.IGNORECASE,
)
_DIGIT_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_THOUSANDS = re.compile(r"\b(\d{1,3})((?:,\d{3})+)\b")
_MONEY = re.compile(r"([€$£])\s?(\d+(?:\.\d+)?)")
_GLUED = re.compile(r"\b(\d+(?:\.\d+)?)([a-zA-Z]{1,5})\b")
_AFTER_NUMBER = re.compile(r"\b(\d+(?:\.\d+)?)\s+([A-Za-z]+)\b")
# A time of day: "2am", "2 am", "2 a.m." and "2:00 am" are "2 am"; "18:00"
# and "6:00 pm" are "6 pm", and so is "six in the evening"; "half past nine"
# is "9:30".
_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.](\d\d))?\s*([ap])\.?m\b\.?", re.IGNORECASE)
_DAYTIME = re.compile(
    r"\b(\d{1,2}(?::\d\d)?)(?:\s+o'?clock)?\s+in\s+the\s+(morning|afternoon|evening)\b",
    re.IGNORECASE,
)
_HALF = table("day_halves")
_24H = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
# A time written in four digits with a leading zero ("0630", "0745h") is a
# time of day; other four digits are mostly years or amounts.
_MILITARY = re.compile(r"(?<![\d:.,+-])0(\d)([0-5]\d)h?(?![\d:.,])")
# A month shortened ("Sept", "Oct 3", "3 Dec"): the month. The ones that are
# also words or names ("Jan", "Mar", "May") only beside a day's number.
_MONTH_NUMBERS = {m: int(n) for m, n in table("months").items()}
_MONTH_NAMES = sorted(_MONTH_NUMBERS, key=_MONTH_NUMBERS.__getitem__)
_SHORT_MONTH = table("short_months")
_PLAIN_MONTH = re.compile(r"\b(feb|aug|sept?|oct|nov|dec)\b\.?", re.IGNORECASE)
_NEAR_MONTH = re.compile(
    r"\b(jan|mar|apr|jun|jul)\b\.?(?=\s?\d)|(?<=\d )(jan|mar|apr|jun|jul)\b", re.I
)
# A day and month in digits ("14/03", "03/14", "14.03.2025") is that date when
# only one reading is possible (one part is over 12); "3/4" stays, so do "24/7"
# and versions or fractions inside longer runs.
_NUMERIC_DATE = re.compile(r"(?<![\w/.])(\d{1,2})([/.])(\d{1,2})(?:\2(\d{4}|\d{2}))?(?![\w/]|\.\d)")
# Parts of an hour as minutes: "half an hour" and "a half-hour" are "30 minutes",
# "three quarters of an hour" "45 minutes"; "an hour and a half" and "two
# and a half hours" are "1.5 hours" and "2.5 hours".
_HOUR_PARTS = tuple(
    (re.compile(pattern, re.IGNORECASE), minutes)
    for pattern, minutes in (
        (r"\b(?:three|3)[ -]quarters? of an hour\b", "45 minutes"),
        (r"\b(?:an?\s+|one\s+)?quarter(?:\s+of\s+an\s+|\s+an\s+|-|\s+)hour\b", "15 minutes"),
        (r"\b(?:an?\s+)?half(?:\s+of\s+an\s+|\s+an\s+|-|\s+)hour\b", "30 minutes"),
    )
)
_AND_A_HALF = re.compile(
    r"\b(?:an?|one)\s+(hour|day|week|month|year)\s+and\s+a\s+half\b"
    r"|\b(\d+|one)\s+and\s+a\s+half\b",
    re.IGNORECASE,
)
# Hours and minutes of a duration are written as a clock's: "3h35m", "3 hours 42
# minutes", "2 hrs and 5 mins" and "1h47m30s" are "3:35", "3:42", "2:05" and
# "1:47:30", the way a race time or a flight's length is noted ("PB: 3:42").
_HOURS_MINUTES = re.compile(
    r"\b(\d{1,2})\s?(?:h|hrs?|hours?)\.?,?\s?(?:and\s)?([0-5]?\d)\s?(?:m|mins?|minutes?)"
    r"(?:\.?,?\s?(?:and\s)?([0-5]?\d)\s?(?:s|secs?|seconds?))?\b"
    r"|\b(\d{1,2})h([0-5]\d)\b",
    re.IGNORECASE,
)
# ... and whole minutes' seconds go: "1:52:00" is "1:52".
_ZERO_SECONDS = re.compile(r"\b(\d{1,2}:[0-5]\d):00\b")
# A year shortened to two digits after an apostrophe ("a '15 Outback", "class of
# '09", "the '90s") is read as POSIX's strptime reads "%y": 69-99 are 19xx,
# 00-68 are 20xx.
_SHORT_YEAR = re.compile(r"(?<![\w'’])['’](\d\d)(?=s\b|[^\w'’]|$)")
_PIVOT = 69
# Blood groups are written one way, one word with the sign spelt out: "O-", "O
# neg" and "O, Rh negative" are "O-negative"; "AB+" is "AB-positive" (where blood
# is spoken of: "an A+ in maths" is a grade).
_BLOOD = re.compile(rf"\b(?:{alternation('blood_words')})\b", re.IGNORECASE)
_BLOOD_SIGN = re.compile(r"\b(AB|A|B|O)([+-])(?![\w+-])")
_BLOOD_SHORT = re.compile(r"\b(AB|A|B|O)\s?(pos|neg)\b\.?")
# (Not opening the statement: "A negative result" is no blood group.)
_BLOOD_WORDS = re.compile(r"(?<=\S\s)(AB|A|B|O),?[\s-](positive|negative)\b")
_RHESUS = re.compile(
    r"\bRh(?:esus)?[\s-]?(?:(positive|negative)\b|([+-])(?![\w+-]))", re.IGNORECASE
)
_SIGN_WORDS = table("signs")
# Weekdays shortened: "next tue", "on thurs" are "next Tuesday", "on Thursday"
# ("wed", "sat" and "sun" only after a word that names a day: they are words too).
_DAY_NAMES = table("days")
_DAY_SLASH = re.compile(r"(?<=day)/(?=(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b)")
_DAY = r"(?:mon|tues?|weds?|thu|thurs?|fri|sat|sun)"
_SHORT_DAY = re.compile(
    r"\b(?:(?<=on )|(?<=next )|(?<=every )|(?<=each )|(?<=this )|(?<=last ))"
    rf"({_DAY})\b\.?(?!-)"
    rf"|\b({_DAY})(?=/{_DAY}\b)"
    rf"|(?<=/)({_DAY})\b"
    r"|\b(tues?|thu|thurs?)\b\.?(?!-)"
    # ... or before a time of day: "Sun 3am", "sat 10:00".
    r"|\b(mon|weds?|fri|sat|sun)\b\.?(?=,?\s+\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\b|:|h\b)|,?\s+\d{1,2}:\d\d)",
    re.IGNORECASE,
)
# ... and so are two or more of them joined ("Mon and Wed", "Tue & Thu", "sat,
# sun"): each names a day because the other does.
_DAY_RUN = re.compile(rf"\b{_DAY}(?:\s*(?:,|and|&|\+)\s*{_DAY})+\b\.?", re.IGNORECASE)
_DAY_WORD = re.compile(rf"\b{_DAY}\b\.?", re.IGNORECASE)
# "Gigabit" with no number is one ("a gigabit plan", "gigabit fibre": 1 Gbps).
_BARE_GIGABIT = re.compile(r"(?<![\d.])(?<![\d.]\s)\bgigabit\b", re.IGNORECASE)
# A number joined to its word by a hyphen is the number and the word: "a
# five-kilometre run", "a 4-day week", "a 12-year-old cat", "2-space indents".
_HYPHENED = re.compile(r"\b(\d+(?:\.\d+)?)-(?=[a-z])")
# "Two times" and "one time" a day are "twice" and "once" ("2x" already is).
_N_TIMES = re.compile(
    r"\b([12]) times?(?=\s+(?:a|an|per|each|every|daily|weekly|monthly|yearly)\b)"
)
# A decade is ten years.
_DECADE = re.compile(r"\b(?:a|one)\s+decade\b", re.IGNORECASE)
# "Half six" is half past six (British), after "at" or before a part of the day.
_HALF_HOUR = re.compile(
    r"\b(at\s+)half\s+(\d{1,2})\b|\bhalf\s+(\d{1,2})(?=\s+in\s+the\s+(?:morning|afternoon|evening))",
    re.IGNORECASE,
)
# A run of "5k" is five kilometres, not five thousand.
_RACE = re.compile(
    r"\b(\d+(?:\.\d+)?)[kK](?=\s+(?:run|race|runs|races|jog|fun run)\b)"
    r"|\b((?:run|runs|ran|running|jog|jogs|jogged)\s+(?:a\s+)?)(\d+(?:\.\d+)?)[kK]\b"
)
# "Half past six", "quarter past eight", "ten past eight" (minutes up to 29).
_PAST = re.compile(r"\b(half|quarter|[1-9]|1\d|2\d)(?: minutes)? past (\d{1,2})\b", re.IGNORECASE)
_PAST_MINUTES = {w: int(n) for w, n in table("past_minutes").items()}
_TO = re.compile(r"\bquarter to (\d{1,2})\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """The statement with each number, unit, sum, time and cadence written one way."""
    for pattern, word in _CADENCE:
        text = pattern.sub(word, text)
    text = _SHORT_YEAR.sub(_short_year, text)
    if _BLOOD.search(text):
        text = _RHESUS.sub(lambda m: m.group(1) or _SIGN_WORDS[m.group(2)], text)
        text = _BLOOD_SIGN.sub(lambda m: f"{m.group(1)}-{_SIGN_WORDS[m.group(2)]}", text)
        text = _BLOOD_SHORT.sub(lambda m: f"{m.group(1)}-{_SIGN_WORDS[m.group(2)]}", text)
        text = _BLOOD_WORDS.sub(r"\1-\2", text)
    text = _RACE.sub(
        lambda m: f"{m.group(1)} km" if m.group(1) else f"{m.group(2)}{m.group(3)} km", text
    )
    text = _KILO.sub(_thousands, text)
    text = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    text = _GROUPED.sub(_grouped, text)
    text = _CODE_MONEY.sub(lambda m: f"{m.group(2)} {UNITS[m.group(1).lower()]}", text)
    text = _DEGREES.sub(" degree", text)
    if _WEIGHT.search(text):
        text = _POUNDS.sub(r"\1lb", text)
    text = _HALF_DOZEN.sub("6", text)
    text = _FIRST_OF.sub(
        lambda m: m.group(1) + ("1" if m.group(2).lower() == "first" else "2") + m.group(3), text
    )
    text = _MONEY.sub(lambda m: f"{m.group(2)} {_CURRENCY[m.group(1)]}", text)
    text = _PERCENT.sub(lambda m: " percent" if m.group().strip() == "%" else "percent", text)
    text = _VERSION.sub("", text)
    text = _NAMED_NUMBER.sub(r"\1 \2", text)
    text = _WORKWEEK.sub("weekdays", text)
    text = _DAY_RUN.sub(
        lambda m: _DAY_WORD.sub(lambda d: _DAY_NAMES[d.group().rstrip(".").lower()], m.group()),
        text,
    )
    text = _SHORT_DAY.sub(lambda m: _DAY_NAMES[next(g for g in m.groups() if g).lower()], text)
    text = _DAY_SLASH.sub(", ", text)  # "Monday/Wednesday" is two days, no one word
    text = _PLAIN_MONTH.sub(lambda m: _SHORT_MONTH[m.group(1).lower()], text)
    text = _NEAR_MONTH.sub(lambda m: _SHORT_MONTH[(m.group(1) or m.group(2)).lower()], text)
    text = _NUMERIC_DATE.sub(_date, text)
    text = _MILITARY.sub(r"0\1:\2", text)
    text = _TIMES.sub(lambda m: _TIMES_WORDS.get(m.group(1), m.group(1) + " times"), text)
    text = _ORDINAL.sub(_ordinal, text)
    text = _DIGIT_ORDINAL.sub(r"\1", text)
    for pattern, minutes in _HOUR_PARTS:
        text = pattern.sub(minutes, text)
    text = _NUMBER_RUN.sub(_number, text)
    text = _BARE_GIGABIT.sub("1 gigabit", text)
    text = _HYPHENED.sub(r"\1 ", text)
    text = _N_TIMES.sub(lambda m: "twice" if m.group(1) == "2" else "once", text)
    text = _DECADE.sub("10 years", text)
    text = _HALF_HOUR.sub(lambda m: f"{m.group(1) or ''}{m.group(2) or m.group(3)}:30", text)
    text = _AND_A_HALF.sub(_and_a_half, text)
    text = _HOURS_MINUTES.sub(_hours_minutes, text)
    text = _ZERO_SECONDS.sub(r"\1", text)
    # After the number words: "eighteen hundred dollars a month" has its number now.
    text = _PER.sub(lambda m: f"{m.group(1)}{_ADVERB[m.group(2).lower()]}", text)
    text = _PER_DAY.sub(lambda m: f"{m.group(1)}daily", text)
    text = _PAST.sub(_past, text)
    text = _TO.sub(lambda m: f"{(int(m.group(1)) - 2) % 12 + 1}:45", text)
    text = _DAYTIME.sub(lambda m: m.group(1) + _HALF[m.group(2).lower()], text)
    text = _CLOCK.sub(_twelve_hour, text)
    text = _24H.sub(_twenty_four_hour, text)
    text = _GLUED.sub(_glued, text)
    text = _AFTER_NUMBER.sub(_unit, text)
    text = _SLASH_RATE.sub(
        lambda m: f" per {_RATE_UNITS.get(m.group(1).lower(), m.group(1).lower())}", text
    )
    return _SLASH_PER.sub(lambda m: f"{m.group(1)} {_SLASH_ADVERB[m.group(2).lower()]}", text)


def _date(m: re.Match[str]) -> str:
    first, second, year = int(m.group(1)), int(m.group(3)), m.group(4)
    if (m.group(2) == "." and not year) or m.group(0) == "24/7":
        return m.group(0)  # "14.03" is as often a decimal number; "24/7" no date
    if first > 12 and 1 <= second <= 12 and first <= 31:
        day, month = first, second
    elif second > 12 and 1 <= first <= 12 and second <= 31:
        day, month = second, first
    else:
        return m.group(0)  # "3/4": either reading
    return f"{_MONTH_NAMES[month - 1]} {day}" + (f" {year}" if year else "")


def _and_a_half(m: re.Match[str]) -> str:
    if m.group(1):
        return f"1.5 {m.group(1)}s"  # "an hour and a half"
    whole = m.group(2)
    return f"{1 if whole.lower() == 'one' else whole}.5"


def _past(m: re.Match[str]) -> str:
    minutes = _PAST_MINUTES.get(m.group(1).lower()) or int(m.group(1))
    return f"{m.group(2)}:{minutes:02d}"


def _short_year(m: re.Match[str]) -> str:
    return ("19" if int(m.group(1)) >= _PIVOT else "20") + m.group(1)


def _hours_minutes(m: re.Match[str]) -> str:
    if not m.group(1):
        return f"{int(m.group(4))}:{int(m.group(5)):02d}"
    seconds = int(m.group(3) or 0)
    return f"{int(m.group(1))}:{int(m.group(2)):02d}" + (f":{seconds:02d}" if seconds else "")


def _thousands(m: re.Match[str]) -> str:
    number = float(m.group(1)) * 1000
    return str(int(number)) if number.is_integer() else str(number)


def _ordinal(m: re.Match[str]) -> str:
    word = m.group(0).lower()
    tens, _, ones = word.rpartition("-")
    if not tens and ones in ("first", "second"):
        return m.group(0)  # "first language", "a second car"
    ones_value = _ORDINAL_ONES.get(ones, ORDINALS.get(ones, 0))
    return str(TENS.get(tens, 0) + ones_value)


def _number(m: re.Match[str]) -> str:
    """A run of number words as digits; runs that are not one number stay as they are."""
    words = [w for w in re.split(r"[\s-]+", m.group(0).lower()) if w not in ("a", "an", "and")]
    if words == ["one"]:
        return m.group(0)  # mostly a pronoun
    numbers = _read(words)
    if len(numbers) >= MIN_SPELT and all(n < 10 for n in numbers) and len(numbers) == len(words):
        return "".join(map(str, numbers))  # digits said one by one: "four four one seven"
    return " ".join(str(n) for n in numbers)


def _read(words: list[str]) -> list[int]:
    """The numbers a run of number words says ("thirty two" -> [32], "two three" ->
    [2, 3], "a hundred and eight" -> [108])."""
    out: list[int] = []
    total = current = 0
    last = ""  # the kind of the previous word: small, tens, hundred, scale
    for w in words:
        if w in SMALL or w in TENS:
            kind = "tens" if w in TENS else "small"
            # A word that cannot continue the number starts another one:
            # "two three", "twenty thirty", "twelve five".
            ones = last == "tens" and kind == "small" and SMALL[w] < 10  # "thirty-two"
            if last in ("small", "tens") and not ones:
                out.append(total + current)
                total = current = 0
            current += TENS.get(w, SMALL.get(w, 0))
            last = kind
        elif w == "hundred":
            current = max(current, 1) * 100
            last = "hundred"
        else:
            total += max(current, 1) * SCALES[w]
            current = 0
            last = "scale"
    out.append(total + current)
    return out


def _twelve_hour(m: re.Match[str]) -> str:
    hour, minutes, half = m.group(1), m.group(2), m.group(3).lower()
    return f"{hour}:{minutes} {half}m" if minutes and minutes != "00" else f"{hour} {half}m"


def _twenty_four_hour(m: re.Match[str]) -> str:
    hour, minutes = int(m.group(1)), m.group(2)
    if hour > 12:
        return f"{hour - 12} pm" if minutes == "00" else f"{hour - 12}:{minutes} pm"
    # A leading zero is a 24-hour clock's morning: "03:00" is 3 am; "3:00" says no half.
    half = " am" if m.group(1).startswith("0") and hour else ""
    return f"{hour}{half}" if minutes == "00" else f"{hour}:{minutes}{half}"


def _grouped(m: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", m.group(0))
    if len(digits) < MIN_GROUPED or _ISO_DATE.fullmatch(m.group(0)) or _YEARS.fullmatch(m.group(0)):
        return m.group(0)
    return digits


def _glued(m: re.Match[str]) -> str:
    """ "16GB" is "16 gb"; "2x", "3d" or "1990s" are no units and stay."""
    number, suffix = m.group(1), m.group(2).lower()
    if suffix == "s" and re.fullmatch(r"(?:19|20)\d0", number):
        return m.group(0)  # a decade, "the 1990s"
    unit = UNITS.get(suffix) or _GLUED_ONLY.get(suffix)
    return m.group(0) if unit is None else f"{number} {unit}"


def _unit(m: re.Match[str]) -> str:
    number, word = m.group(1), m.group(2)
    unit = UNITS.get(word.lower())
    return m.group(0) if unit is None else f"{number} {unit}"
