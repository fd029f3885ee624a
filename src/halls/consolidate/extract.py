"""Statements from utterances (pure): what a turn says that is worth keeping.

A conversation turn is not a fact. "Caroline: Hey Mel! Lately, I've been
looking into counseling as a career. How about you?" holds one statement
("Lately, Caroline has been looking into counseling as a career.") between a
greeting and a question. The consolidator clusters statements, not turns,
so that what recurs because it is a formula (greetings, thanks, farewells,
questions) never reaches the long-term tier, and what it promotes reads as a
self-contained sentence.

No model is used; the rules read the form of each sentence (its dialogue
act), never a list of known sentences:

1. Split: image captions (``[image: ...]``) go; the text is cut into
   sentences at ``.``, ``!``, ``?``, ``;``, line breaks and dashes between
   spaces (chat writes clauses that way). Bullets are stripped.
   A sentence that joins two statements is cut in two: at ", so" and at
   a comma before a first-person clause ("it's Sam, I never go by ..."),
   after a leading reason clause ("Since I'm in Lisbon now, meetings ..."
   -> "I'm in Lisbon now" + "meetings ..."), and after a leading role
   ("As a vegan I need ..." -> "I am a vegan" + "I need ...").
2. Strip the edges of a sentence that carry no content: interjections and
   discourse markers ("Hey", "Wow,", "So,", "Anyway,", "By the way,",
   "Again,"), in dialogue a vocative (a capitalised name set off by a
   comma: "Caroline, ...", "..., Mel!"; not a name followed by an
   apposition: "Leo, my son, ...") and a leading formula with its comma
   ("Thanks, ..."). Openers that reconciliation reads stay: "also", "plus"
   and "now" (an addition, a change), and "no" without a comma (a
   determiner: "No prawns for Sven"). A request to
   remember ("Remember, ...", "Keep in mind ...", "For the record, ...",
   "Note that ...") is stripped too, and marks what follows as something
   the speaker wants kept: it needs no first-person subject (below). "Call
   me Sam" is the speaker's name: "I go by Sam".
3. Drop a sentence whose act is not a statement:

   - a question: it ends with ``?`` or opens in interrogative form (a wh-word
     or an auxiliary followed by a pronoun: "Did you ...", "How's it ...");
   - a formula: it opens with a greeting, thanks, farewell, apology,
     acknowledgement, congratulation or wish ("Bye", "Thank you so much",
     "No worries", "Have a great day", "Good luck"), or nothing is left once
     the edges are stripped;
   - (utterances only) a sentence addressed to the listener or depending on
     the turn before: it mentions the second person ("you", "your": a
     compliment, encouragement, a request) or its subject is a pronoun that
     points outside it ("that", "it", "this", "they", "he", "she", "there":
     "That's awesome!", "It was a great experience").
   - (utterances only) a sentence that says nothing of the speaker: it has no
     first-person subject ("I", "we", "my ...", "our ...") and was not
     asked to be remembered. What a user
     states of themself (facts, preferences, decisions, plans) is what a
     personal memory keeps; a remark about the world in a chat is left to
     the short-term tier.

   Said by the user to an assistant (the ``user`` role) the last two do not
   apply: "you" is the assistant ("keep your answers short"), and what the
   user says of their projects and the people around them is theirs to keep
   ("the staging db is Postgres 15", "priya reviews the android PRs"). Their
   requests are kept too, without "please" ("use poetry in ledgerly-api"):
   a request said once ages out with its entry, one that recurs is a
   preference the evidence gate promotes (one for something now, "run the
   tests again", is evidence only: ``standalone``). A sentence that opens
   with a past or progressive verb and no subject leaves out "I"
   ("booked the flights" -> "The user booked the flights").

   A sentence of a dialogue that opens with "he" or "she" speaks of the one
   person the speaker named just before (the sentences before it in the turn,
   or the speaker's previous turn of the session right before it: ``before``),
   and is told of them by name ("My sister Ana lives in Porto. She works at a
   hospital." -> "Ana works at a hospital."); with no one or several named
   there, it still points outside itself and is dropped.
   - a sentence with fewer than ``MIN_CONTENT_WORDS`` content words (words
     that are not function words, pronouns, formula words or intensifiers):
     "I love it." carries nothing once its pronoun is gone.

4. Rewrite an utterance's statement in the third person, so that it stands
   alone: "I am" / "I'm" -> "<Name> is", "I have" / "I've" -> "<Name> has",
   "I'd" -> "<Name> would" (or "had" before "been"), "I'll" -> "<Name> will",
   "I" + verb -> "<Name>" + the verb's third-person form ("love" ->
   "loves", "go" -> "goes", "study" -> "studies"; past forms and modals
   stay), "my" / "mine" -> "<Name>'s", "me" / "myself" -> "<Name>",
   "we" -> "<Name> and others", "our" -> "<Name>'s", "us" -> "<Name> and
   others". The result starts with a capital and ends with a full stop.

Text without a speaker (a note someone chose to remember, a brief's summary)
is a *note*: only questions and formulae are dropped, a sentence that
points back with a pronoun ("...; he commutes by bicycle") stays with the
one before, and nothing is rewritten, so a stored note that already is a
statement ("Chad prefers tabs") passes through unchanged.

The steps live by concept: splitting in ``segment`` (1), the word classes and
the act of a sentence in ``dialogue_acts`` (2, 3), the speaker label in
``speaker``, the rewrite in ``third_person`` (4); this module decides, per
sentence, what statement it makes (``statement``) and gathers a text's
(``statements``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from halls.consolidate import voices
from halls.consolidate.dialogue_acts import (
    AUX,
    DEICTIC,
    FIRST_PERSON,
    MEMO,
    SECOND_PERSON,
    STANDING,
    WH,
    content_words,
    is_formula,
    is_question,
    strip_edges,
    words_of,
)
from halls.consolidate.segment import clauses, plain, sentences
from halls.consolidate.speaker import USER, speaker_of
from halls.consolidate.third_person import third_person

MIN_CONTENT_WORDS = 2
CONTEXT = 3  # sentences before one that opens with "he" or "she" where its person is named

# A sentence whose subject is left out opens with a verb, modal or predicate
# ("Glad I could help", "Gonna keep going", "Gives me a visual"): its subject
# is in the turn before, so it does not stand alone.
_ELIDED = frozenset(
    (  # noqa: SIM905
        "can could will would should might must can't won't wouldn't couldn't shouldn't gonna "
        "wanna gotta been got had have has is was am are were glad happy sorry excited thankful "
        "grateful proud hope hoping wish wishing thinking feeling love loving miss missing "
        "looking gives keeps makes sounds looks seems feels reminds means adding going trying "
        "just"
    ).split()
)
# Passing states and feelings: "I'm tired" is no attribute of the speaker.
_STATES = frozenset(
    (  # noqa: SIM905
        "tired happy sad excited good fine great okay ok glad sorry busy sick ill ready back done "
        "here home bored stressed nervous thrilled grateful thankful proud lucky blessed curious "
        "sure afraid scared exhausted stoked pumped hungry thirsty late early free away out in "
        "off on up down well better worse awesome amazing cool alright confused lost stuck upset "
        "angry mad worried relieved surprised impressed jealous lonely"
    ).split()
)
_CALL_ME = re.compile(r"(?i)^(?:please\s+)?call me\s+(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement drawn from a text: the sentence as it was, and as it is kept."""

    text: str
    sentence: str


# In a note, a request that holds from now on is a preference its writer
# states ("Please always give me the report in PDF", "Don't ever push to main
# on a Friday"); a one-time request ("Please fix the build") is not. Said by
# the user to an assistant, every request is kept (``_request``); what one
# person asks of another in a conversation ("Don't ever give up!") is not.
_DIRECTIVE = re.compile(r"(?i)^(?:please\b|don'?t\b|do not\b)")


def _standing(raw: str, speaker: str | None) -> str | None:
    """The standing request a note's ``raw`` makes, without its "please"; None if none."""
    if speaker is not None or not STANDING.search(raw):
        return None
    if not _DIRECTIVE.match(raw) and not voices.is_imperative(raw):
        return None
    s = re.sub(r"(?i)^please,?\s+", "", raw.strip())
    s = re.sub(r"(?i),?\s+please([.!]*)$", r"\1", s)
    return _finish(s) if content_words(s) else None


# "Please" and its chat spellings carry no content wherever they stand.
_POLITE = re.compile(r"(?i)\b(?:please|pls|plz)\b")


def _unpolite(text: str) -> str:
    s = re.sub(r"\s+([,.!])", r"\1", _POLITE.sub("", text))
    return re.sub(r",(?=[,.!]|$)", "", s).strip(" ,")


def _request(raw: str) -> str | None:
    """What the user asks of the assistant, without its "please"; None if not a request.

    Said to an assistant, a request is what the user wants of it ("use poetry
    in ledgerly-api", "don't touch vendor/"), standing or not: one said once
    ages out with its entry, one that recurs is a preference worth keeping.
    """
    if not _DIRECTIVE.match(raw) and not voices.is_imperative(raw):
        return None
    s = _unpolite(raw)
    return _finish(s) if len(content_words(s)) >= MIN_CONTENT_WORDS else None


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().strip("\"'")
    text = re.sub(r"[!.?,:;]+$", "", text).rstrip()
    if not text:
        return ""
    return text[0].upper() + text[1:] + "."


def _attribute(sentence: str, word: str) -> bool:
    """A one-word statement worth keeping: "I'm vegan", "I'm in Lisbon", not "I'm tired"."""
    if re.search(r"\s(?!I\b|I')[A-Z]", sentence.strip()):
        return True  # a name or a place: "I'm on JST", "I'm in Lisbon now"
    copula = re.match(r"(?i)^(?:i'm|i am)\s+(?:an?\s+)?([\w-]+)[.!]*$", sentence.strip())
    if copula is None:
        return False
    return copula.group(1).lower() == word and word not in _STATES


# Chat writes the first person in lower case ("i'm vegan", "i use fish"): the
# pronoun is "I" wherever it stands alone.
_LOWER_I = re.compile(r"(?<![\w.'-])i(?=(?:'(?:m|ve|d|ll))?(?![\w.-]))")


def statement(sentence: str, speaker: str | None) -> str | None:
    """The statement ``sentence`` makes (rewritten for ``speaker``), or None if it makes none."""
    raw = sentence.strip()
    if not raw or raw.endswith(":"):
        return None  # a heading ("The user asked:") introduces, it does not state
    noted = False
    if speaker is not None:
        raw = _LOWER_I.sub("I", raw)
        raw = _CALL_ME.sub("I go by ", raw)
        m = MEMO.match(raw)
        if m and raw[m.end() :].strip():
            raw, noted = raw[m.end() :], True
    if is_question(raw):
        return None
    kept = _request(raw) if speaker == USER else _standing(raw, speaker)
    if kept:
        return kept
    s = strip_edges(raw, dialogue=speaker is not None)
    if is_formula(raw) or not s or is_question(s) or is_formula(s):
        return None
    if speaker == USER:
        s = _unpolite(s)
    if speaker is None:
        if not content_words(s):
            return None
        return s if s == raw else _finish(s)
    words = words_of(s)
    # Said to an assistant, "you" is the assistant ("keep your answers short");
    # in a conversation between people, the listener and their news.
    if speaker != USER and any(w in SECOND_PERSON for w in words):
        return None
    if speaker == USER:
        # Said to an assistant, a sentence that opens with a verb leaves out "I".
        elided = voices.elided_subject(s)
        if elided is not None:
            s = f"{elided} {s[0].lower()}{s[1:]}"
            words = words_of(s)
    if words[0] in DEICTIC or words[0] in WH | AUX | _ELIDED:
        return None
    if not noted and not any(w in FIRST_PERSON for w in words):
        # Said to an assistant, a statement about anything is kept ("the
        # staging db is Postgres 15", "priya reviews the android PRs"): what
        # recurs of it is promoted, what was said once ages out.
        said = speaker == USER and len(content_words(s)) >= MIN_CONTENT_WORDS
        return _finish(s) if said else None
    name_words = frozenset(words_of(speaker))
    found = content_words(s, name_words)
    if len(found) < MIN_CONTENT_WORDS and not (found and (noted or _attribute(s, found[0]))):
        return None
    return _finish(third_person(s, speaker))


# Pronouns by which a note's sentence points back at what the sentence before
# named ("Marco never drives; he cycles", "billing-svc isn't on MySQL - its db
# is Postgres"). Such a sentence does not stand alone: it stays with the one
# before, as one statement. ("There", "this" and "that" open statements of their own.)
_BACK = frozenset(
    (  # noqa: SIM905 - a string reads better
        "he he's he'd he'll his him she she's she'd she'll her it it's its they they're they've "
        "they'd they'll their them"
    ).split()
)


# A sentence that opens with "he" or "she" speaks of someone named just before.
_HE_SHE = re.compile(r"(?i)^(he|she)(?:(\'s been)|(\'s)|(\'d)|(\'ll))?\b")
_EXPANDED = {2: " has been", 3: " is", 4: " would", 5: " will"}


def _resolved(sentence: str, before: Sequence[str], speaker: str) -> str:
    """``sentence`` with a leading "he" or "she" put as the one person the sentences
    ``before`` it name (not the speaker); as it was if they name none or several."""
    m = _HE_SHE.match(sentence)
    if m is None or not before:
        return sentence
    named = [p for p in voices.people(" ".join(before)) if p.lower() != speaker.lower()]
    if len(named) != 1:
        return sentence
    verb = next((_EXPANDED[g] for g in _EXPANDED if m.group(g)), "")
    return f"{named[0]}{verb}{sentence[m.end() :]}"


def statements(
    text: str, speaker: str | None = None, before: Sequence[str] = ()
) -> list[Statement]:
    """The statements of ``text``; a leading speaker label names the speaker when none is
    given. ``before`` are the sentences the speaker said just before (their previous
    turn of the session): a sentence that opens with "he" or "she" is of the one person
    they and the sentences before it in ``text`` name, if just one."""
    if speaker is None:
        speaker, text = speaker_of(text)
    if speaker is None:
        return _note(text)
    out: list[Statement] = []
    said = list(before)[-CONTEXT:]
    for sentence in sentences(text):
        sentence, said = _resolved(sentence, said, speaker), [*said, sentence][-CONTEXT:]
        for part in clauses(sentence) if speaker is not None else [sentence]:
            kept = statement(part, speaker)
            if kept:
                out.append(Statement(kept, sentence))
    return out


def _note(text: str) -> list[Statement]:
    """A note's statements: its sentences, one pointing back kept with the one before."""
    whole = plain(text)
    out: list[Statement] = []
    follows = False  # whether the sentence before was kept
    for sentence in sentences(text):
        kept = statement(sentence, None)
        points_back = follows and words_of(sentence)[:1] in ([w] for w in _BACK)
        follows = bool(kept)
        if not kept:
            continue
        if not points_back:
            out.append(Statement(kept, sentence))
            continue
        # The two as the note wrote them ("...; he ...", "... - its ..."); a
        # list's items stand alone.
        before = out[-1]
        start = whole.find(before.sentence)
        end = whole.find(sentence, start + len(before.sentence)) if start >= 0 else -1
        if end >= 0 and "\n" in whole[start:end]:
            out.append(Statement(kept, sentence))
        elif end < 0 or before.text != before.sentence:
            out[-1] = Statement(f"{before.text.rstrip(' .;')}; {kept}", before.sentence)
        else:
            both = whole[start : end + len(sentence)]
            out[-1] = Statement(both, both)
    return out
