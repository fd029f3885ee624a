"""Values written one way (``halls.consolidate.judge.values``): numbers, units, sums, times."""

from __future__ import annotations

import pytest

from halls.consolidate.judge.values import amount, normalise, same_amount


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("a hundred and eight centimetres", "108 cm"),
        ("thirty-two gigabytes", "32 gb"),
        ("16GB of RAM", "16 gb of RAM"),
        ("sixteen gigs", "16 gb"),
        ("two thousand and nine", "2009"),
        ("€1,150 a month", "1150 euro monthly"),
        ("1150 euros per month", "1150 euro monthly"),
        ("3 times a week", "3 times weekly"),
        ("every two weeks", "biweekly"),
        ("once a month", "monthly"),
        ("at 18:00", "at 6 pm"),
        ("at 6:00pm", "at 6 pm"),
        ("at 2 a.m.", "at 2 am"),
        ("at three in the afternoon", "at 3 pm"),
        ("at half past nine", "at 9:30"),
        ("at quarter to ten", "at 9:45"),
        ("on the third of March", "on the 3 of March"),
        ("the twenty-first", "the 21"),
        ("Maya's a fourth grader", "Maya's a 4 grader"),  # "a" before an ordinal and a noun
        ("on March 3rd, the 21st", "on March 3, the 21"),
        ("$1,850/mo", "1850 dollar monthly"),
        ("eighteen hundred and fifty dollars a month", "1850 dollar monthly"),
        ("20 EUR/month", "20 euro monthly"),
        ("6.8%", "6.8 percent"),
        ("6.8 per cent", "6.8 percent"),
        ("node v20", "node 20"),
        ("Mon-Fri", "weekdays"),
        ("Monday to Friday", "weekdays"),
        ("oil change at 60k mi", "oil change at 60000 mi"),
        ("due at 60,000 miles", "due at 60000 mi"),
        ("$1.5k/mo", "1500 dollar monthly"),
        ("staging db: pg14", "staging db: pg 14"),
        ("python3.12", "python 3.12"),
        ("COVID-19", "COVID 19"),
        ("2x per day", "twice daily"),
        ("fed 1x daily", "fed once daily"),
        ("fed once a day", "fed once daily"),
        ("ten cigarettes a day", "10 cigarettes daily"),
        ("a smoker (~10/day)", "a smoker (~10 daily)"),
        ("MOT due Sept", "MOT due September"),
        ("Jan 5th", "January 5"),
        ("due 5 Jan", "due 5 January"),
        ("birthday: 14/03", "birthday: March 14"),
        ("on 03/14/2025", "on March 14 2025"),
        ("on 14.03.2025", "on March 14 2025"),
        ("up at 0630", "up at 6:30 am"),  # a leading zero is a 24-hour morning
        ("reboot: Sundays 03:00", "reboot: Sundays 3 am"),
        ("every weekday morning", "weekdays morning"),
        ("each workday", "weekdays"),
        ("on working days", "on weekdays"),
        ("three quarters of an hour", "45 minute"),
        ("a half-hour walk", "30 minute walk"),
        ("half an hour each way", "30 minute each way"),
        ("a quarter of an hour", "15 minute"),
        ("an hour and a half", "1.5 hour"),
        ("two and a half hours", "2.5 hour"),
        ("one and a half years", "1.5 year"),
        ("marathon PB: 3h35m", "marathon PB: 3:35"),
        ("3 hours 42 minutes", "3:42"),
        ("2 hrs and 5 mins", "2:05"),
        ("PB: 1h47m30s", "PB: 1:47:30"),
        ("PB: 1:52:00", "PB: 1:52"),
        ("blood group: O-", "blood group: O-negative"),
        ("blood type is O negative", "blood type is O-negative"),
        ("blood is type O, Rh negative", "blood is type O-negative"),
        ("AB+ blood donor", "AB-positive blood donor"),
        ("broadband: gigabit fibre", "broadband: 1 gbps fibre"),
        ("a 10 gigabit link", "a 10 gbps link"),
        ("an 8-hour workday", "an 8 hour workday"),  # one workday is a length of time
        ("a twelve-year-old cat", "a 12 year-old cat"),
        ("a five-kilometre run", "a 5 km run"),
        ("runs 5k", "runs 5 km"),  # a run's "k" is kilometres...
        ("a 60k salary", "a 60000 salary"),  # ... others' a thousand
        ("two times a day", "twice daily"),
        ("for a decade", "for 10 year"),
        ("leaves at ten past eight", "leaves at 8:10"),
        ("serviced next tue", "serviced next Tuesday"),
        ("retro every thurs", "retro every Thursday"),
        ("gym mon/wed/fri", "gym Monday, Wednesday, Friday"),
        ("at half six in the morning", "at 6:30 am"),
        ("a '15 Outback", "a 2015 Outback"),
        ("('18)", "(2018)"),
        ("class of ’99", "class of 1999"),
        ("the '90s", "the 1990s"),
        ("a dozen characters", "12 characters"),
        ("two dozen eggs", "24 eggs"),
        ("half a dozen cats", "6 cats"),
        ("the 7.12 am train", "the 7:12 am train"),
        ("watered every other day", "watered every 2 day"),
        ("on alternate days", "every 2 day"),
        ("tips the scales at 48.5 pounds", "tips the scales at 48.5 lb"),
        ("rotates on the first of every month", "rotates on the 1 of monthly"),
        ("trains Mon and Wed", "trains Monday and Wednesday"),
        ("Tue & Thu", "Tuesday & Thursday"),
        ("600 req/min", "600 req per minute"),
        ("300/min", "300 per minute"),
        ("cleanup cron (Sun 3am)", "cleanup cron (Sunday 3 am)"),
        ("Wed 9am standup", "Wednesday 9 am standup"),
        ("It costs 40 pounds", "It costs 40 pound"),  # money: no weight is spoken of
    ],
)
def test_a_value_is_written_one_way(written: str, read: str) -> None:
    assert normalise(written) == read


@pytest.mark.parametrize(
    "text",
    [
        "the one I use",  # "one" alone is mostly a pronoun
        "her first language",  # "first"/"second" are rarely dates
        "a second car",
        "a third of the budget",  # a share
        "cut the costs by a third",  # a share too
        "in a month",  # no cadence
        "a week ago",
        "every day",  # a habit more than a schedule
        "version 3.11",
        "the 7:40 train",
        "Pixel 8",
        "bluefinch42",
        "took a day off",
        "open 24/7",  # no date
        "3/4 of the team",  # either reading: left as written
        "seat 14.03",  # a decimal as often as a date
        "Jan works at Bosch",  # a name, beside no day
        "in 2019",
        "60 km/hr",  # a speed, no price
        "month-to-month",
        "B12 and an i7",  # one letter and its number name one thing
        "GPT-4o",
        "us-east-1",  # a region's number is its own
        "the first half of the hour",
        "in the 1980s",  # a decade, no seconds
        "got an A+ in maths",  # a grade, no blood group
        "A negative blood test",
        "we wed in June",  # a verb, no Wednesday
        "sat on the sofa",
        "Sam's '",
        "I'm 'fine'",
        "first of all, tea",
        "rain and sun",  # no day, though "sun" may shorten one
        "sat 3 exams",
        "and/or",
    ],
)
def test_what_is_no_value_spelling_stays_as_written(text: str) -> None:
    assert normalise(text) == text


def test_number_words_that_are_not_one_number_stay_apart() -> None:
    assert normalise("nineteen ninety-five") == "19 95"
    assert normalise("two three") == "2 3"
    # ... but three or more digits said one by one are one number.
    assert normalise("extension four four one seven") == "extension 4417"


def test_an_amount_in_another_unit_is_the_same_size_as_people_round() -> None:
    km, miles = amount(12, "km"), amount(7.5, "mi")
    assert km is not None and miles is not None
    assert same_amount(km, miles)  # 7.46 miles, rounded
    assert same_amount(amount(90, "minute"), amount(1.5, "hour"))  # type: ignore[arg-type]
    assert same_amount(amount(1, "gbps"), amount(1000, "mbps"))  # type: ignore[arg-type]
    assert same_amount(amount(2, "week"), amount(14, "day"))  # type: ignore[arg-type]
    assert same_amount(amount(3, "month"), amount(90, "day"))  # type: ignore[arg-type]
    assert not same_amount(km, amount(9, "mi"))  # type: ignore[arg-type]
    assert not same_amount(amount(90, "minute"), amount(90, "second"))  # type: ignore[arg-type]
    assert not same_amount(amount(1, "kg"), amount(1, "l"))  # type: ignore[arg-type]  # another measure
    assert amount(20, "euro") is None  # money converts at a rate that changes
