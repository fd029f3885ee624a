"""The names a memory mentions (pure): what links it to other memories.

Two memories that name the same rare thing (a person, a pet, a place, a
book) are associated even when no query word is in both: "Oliver" links
"Caroline: Oliver chewed my shoes again" to "Caroline: I took Oliver to the
vet". The extractor reads the form of the text only — no list of names,
no model — and prefers missing a name to inventing one:

- a run of capitalised words ("New York", "Dr. Lee", "LGBTQ") is a name,
  unless it starts a sentence: there capitalisation is the rule, not a
  sign, so the sentence's first word is left out ("Thanks Mel" -> "mel";
  "Oliver loves the park" names nothing);
- a title in double quotes ("Charlotte's Web", “Becoming Nicole”) of at
  most eight words is a name;
- function words at the ends of a run are dropped ("The Hobbit" ->
  "hobbit"), as are "I", single letters, month and weekday names (dates
  are the time bonuses' business) and the leading speaker label (a
  transcript's speaker is in half its lines: a role, not a subject).

A name becomes a graph node by its hash (``node``): the edges hold no text
of a memory, so a purge that removes the memory leaves nothing of it in
the other memories' edges. How often a name is shared (its fan) is read at
query time by ``halls.recall.spread``; a name in every other memory links
nothing.
"""

from __future__ import annotations

import calendar
import hashlib
import re

from halls.models import Edge
from halls.recall.speakers import without_label
from halls.recall.text import STOPWORDS

MENTIONS = "mentions"
# At most this many names per memory: a list of 200 names is a directory, and
# the edges a write makes stay bounded.
MAX_NAMES = 16
MAX_TITLE_WORDS = 8

_TIME_WORDS = frozenset(
    [m.lower() for m in calendar.month_name if m]
    + [m.lower() for m in calendar.month_abbr if m]
    + [d.lower() for d in calendar.day_name]
    + [d.lower() for d in calendar.day_abbr]
)
_SKIP = STOPWORDS | _TIME_WORDS | {"i", "i'm", "i've", "i'll", "i'd", "im", "ive", "ill", "id"}
# A sentence ends at . ! ? ; : or a line break (a dash or comma does not).
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_TOKEN = re.compile(r"[^\W_](?:[\w'’.-]*[^\W_])?", re.UNICODE)
_QUOTED = re.compile(r"[\"“”]([^\"“”\n]{2,120})[\"“”]")
_POSSESSIVE = re.compile(r"['’]s$", re.I)
# "Dr." and "St." end no sentence.
_ABBREV = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Prof|Mt)\.\s+")


def _capitalised(token: str) -> bool:
    return token[0].isupper() and not token.isdigit()


def _norm(words: list[str]) -> str:
    """Lower-cased, possessive dropped, function words off both ends."""
    out = [_POSSESSIVE.sub("", w).rstrip(".").lower() for w in words]
    while out and out[0] in _SKIP:
        out.pop(0)
    while out and out[-1] in _SKIP:
        out.pop()
    name = " ".join(out)
    return "" if len(name) < 2 or name in _SKIP else name


def names(text: str) -> list[str]:
    """The distinct names ``text`` mentions, in order of first mention (at most MAX_NAMES)."""
    body = without_label(text)
    found: dict[str, None] = {}
    for m in _QUOTED.finditer(body):
        words = _TOKEN.findall(m.group(1))
        if 0 < len(words) <= MAX_TITLE_WORDS:
            found.setdefault(_norm(words), None)
    for sentence in _SENTENCE.split(_ABBREV.sub(r"\1 ", body)):
        tokens = _TOKEN.findall(sentence)
        run: list[str] = []
        for n, token in enumerate(tokens + [""]):
            if token and n > 0 and _capitalised(token):
                run.append(token)
                continue
            if run:
                found.setdefault(_norm(run), None)
                run = []
    found.pop("", None)
    return list(found)[:MAX_NAMES]


def node(name: str) -> str:
    """The graph node of a name: a hash, so that no edge holds a memory's words."""
    return "e_" + hashlib.blake2b(name.encode("utf-8"), digest_size=10).hexdigest()


def mentions(record_id: str, text: str, when: float) -> list[Edge]:
    """The ``mentions`` edges of a record: record -> the node of each name it mentions."""
    return [Edge(record_id, node(n), MENTIONS, when) for n in names(text)]
