"""Domain values (halls.models): time parsing, ids, content checks."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from halls.errors import InvalidInput
from halls.models import (
    _CROCKFORD,
    ID_PREFIX,
    MAX_CONTENT_CHARS,
    check_content,
    check_id,
    new_id,
    parse_time,
    to_datetime,
)

JAN2 = 1704164645.0  # 2024-01-02T03:04:05Z


@pytest.mark.parametrize(
    "value",
    [
        "2024-01-02T03:04:05Z",
        "2024-01-02T03:04:05+00:00",
        "2024-01-02T05:04:05+02:00",
        "2024-01-01T22:04:05-05:00",
        "2024-01-02T03:04:05",  # naive means UTC
        "2024-01-02 03:04:05",
        1704164645,
        1704164645.0,
        "1704164645",
        datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2024, 1, 2, 3, 4, 5),
        datetime(2024, 1, 2, 4, 4, 5, tzinfo=timezone(timedelta(hours=1))),
    ],
)
def test_parse_time_accepts_iso_and_unix(value: object) -> None:
    """ISO-8601 with Z/offset/naive (=UTC), unix seconds (number or string) all agree."""
    assert parse_time(value) == JAN2


def test_parse_time_keeps_fractions_and_dates() -> None:
    """Sub-second precision is kept; a bare date is midnight UTC."""
    assert parse_time(1704164645.25) == 1704164645.25
    assert parse_time("2024-01-02T03:04:05.5Z") == JAN2 + 0.5
    assert parse_time("2024-01-02") == 1704153600.0


def test_parse_time_none_is_none() -> None:
    """None means 'not given'; 0 and -0.0 are the epoch, not 'not given'."""
    assert parse_time(None) is None
    assert parse_time(0) == 0.0 and parse_time("0") == 0.0
    assert str(parse_time(-0.0)) == "0.0"


@pytest.mark.parametrize(
    "value",
    [
        "yesterday",
        "2024-13-01",
        "2024-01-02T25:00:00",
        "   ",
        True,
        False,
        [2024],
        {"t": 1},
        -1,
        "-5",
        1e20,
        float("nan"),
        float("inf"),
        "nan",
        # Not unix seconds as documented (the digits of a JSON number), nor ISO-8601.
        "",
        " 5",
        "5 ",
        "+5",
        "-0",
        "0005",
        "1e9",
        "1_000",
        "\u0665",  # ARABIC-INDIC DIGIT FIVE
        "\u0662\u0660\u0662\u0664-01-02",
        " 2024-01-02T03:04:05Z ",
        "5\n",
        253402300799.00003,  # above the OpenAPI maximum
        "9999-12-31T23:59:59-05:00",  # past year 9999 once in UTC
        "0001-01-01T00:00:00+01:00",  # before year 1 once in UTC
    ],
)
def test_parse_time_refuses_bad_input(value: object) -> None:
    """Anything else is InvalidInput naming the field, never another exception."""
    with pytest.raises(InvalidInput) as info:
        parse_time(value, "occurred_at")
    assert "occurred_at" in info.value.message


def test_parse_time_extremes_still_convert() -> None:
    """Every accepted time converts back to a datetime (no failure on the way out)."""
    for value in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1960-06-01", 0):
        ts = parse_time(value)
        assert ts is not None
        assert to_datetime(ts).tzinfo is UTC  # type: ignore[union-attr]


def test_to_datetime_is_utc_and_round_trips() -> None:
    """to_datetime gives an aware UTC datetime; None stays None."""
    dt = to_datetime(JAN2)
    assert dt == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert to_datetime(None) is None
    assert parse_time(dt.isoformat()) == JAN2  # type: ignore[union-attr]


def test_ids_sort_in_creation_order() -> None:
    """Ids made one after another sort in that order, even within one millisecond."""
    ids = [new_id("short") for _ in range(3000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_id_shape_and_prefix_per_kind() -> None:
    """Each kind has its prefix, then 26 Crockford base32 characters."""
    for kind, prefix in ID_PREFIX.items():
        value = new_id(kind)
        head, body = value.split("_")
        assert head == prefix
        assert len(body) == 26 and set(body) <= set(_CROCKFORD)
        assert check_id(value, kind) == value


def test_id_encodes_its_creation_time() -> None:
    """The first 10 characters are the creation time in milliseconds."""
    before = int(time.time() * 1000)
    body = new_id("short")[2:]
    after = int(time.time() * 1000)
    ms = 0
    for ch in body[:10]:
        ms = ms * 32 + _CROCKFORD.index(ch)
    assert before <= ms <= after


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("", "short"),
        ("s_", "short"),
        ("s_01ARZ3NDEKTSV4RRFFQ69G5FA", "short"),  # 25 characters
        ("s_01ARZ3NDEKTSV4RRFFQ69G5FAVV", "short"),  # 27
        ("s_01ARZ3NDEKTSV4RRFFQ69G5FAI", "short"),  # I is not Crockford
        ("s_01arz3ndektsv4rrffq69g5fav", "short"),  # lower case
        ("x_01ARZ3NDEKTSV4RRFFQ69G5FAV", "short"),
        ("n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "short"),  # a near id where a short one is due
        ("s_01ARZ3NDEKTSV4RRFFQ69G5FAV\n", "short"),
        ("../etc/passwd", "long"),
        ("s_01ARZ3NDEKTSV4RRFFQ69G5FAV; DROP TABLE short", "short"),
        (None, "short"),
        (42, "long"),
    ],
)
def test_check_id_refuses_malformed_or_wrong_kind(value: object, kind: str) -> None:
    """A malformed id, or an id of another tier, is InvalidInput."""
    with pytest.raises(InvalidInput) as info:
        check_id(value, kind)  # type: ignore[arg-type]
    assert f"not a valid {kind} id" in info.value.message


def test_check_id_message_is_bounded() -> None:
    """A huge bad id is not echoed back whole."""
    with pytest.raises(InvalidInput) as info:
        check_id("z" * 10_000, "short")
    assert len(info.value.message) < 200


def test_check_id_accepts_a_well_formed_id() -> None:
    """A well-formed id of the right kind is returned as is."""
    assert check_id("l_01ARZ3NDEKTSV4RRFFQ69G5FAV", "long") == "l_01ARZ3NDEKTSV4RRFFQ69G5FAV"


def test_check_content() -> None:
    """Content must be a non-blank string of at most MAX_CONTENT_CHARS characters."""
    assert check_content("x" * MAX_CONTENT_CHARS) == "x" * MAX_CONTENT_CHARS
    for bad in ("", "   \n\t", "x" * (MAX_CONTENT_CHARS + 1), None, 5):
        with pytest.raises(InvalidInput):
            check_content(bad)  # type: ignore[arg-type]
