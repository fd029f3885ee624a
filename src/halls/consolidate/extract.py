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
from dataclasses import dataclass

from halls.consolidate import voices
from halls.consolidate.dialogue_acts import (
    AUX,
    DEICTIC,
    FIRST_PERSON,
    MEMO,
    SECOND_PERSON,
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


# A request that holds from now on is a preference its speaker states ("Please
# always give me the report in PDF", "Don't ever push to main on a Friday"),
# which memory keeps, said in a note or by the user to an assistant; a
# one-time request ("Please fix the build") is not, nor what one person asks
# of another in a conversation ("Don't ever give up!").
_DIRECTIVE = re.compile(r"(?i)^(?:please\b|don'?t\b|do not\b)")
_STANDING = re.compile(
    r"(?i)\b(?:always|never|ever|from now on|going forward|in (?:the )?future|by default|"
    r"every time|whenever)\b"
)


def _standing(raw: str, speaker: str | None) -> str | None:
    """The standing request ``raw`` makes, without its "please"; None if it is none."""
    if speaker not in (None, USER) or not _STANDING.search(raw):
        return None
    if not _DIRECTIVE.match(raw) and not voices.is_imperative(raw):
        return None
    s = re.sub(r"(?i)^please,?\s+", "", raw.strip())
    s = re.sub(r"(?i),?\s+please([.!]*)$", r"\1", s)
    return _finish(s) if content_words(s) else None


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


def statement(sentence: str, speaker: str | None) -> str | None:
    """The statement ``sentence`` makes (rewritten for ``speaker``), or None if it makes none."""
    raw = sentence.strip()
    if not raw or raw.endswith(":"):
        return None  # a heading ("The user asked:") introduces, it does not state
    noted = False
    if speaker is not None:
        raw = _CALL_ME.sub("I go by ", raw)
        m = MEMO.match(raw)
        if m and raw[m.end() :].strip():
            raw, noted = raw[m.end() :], True
    if is_question(raw):
        return None
    standing = _standing(raw, speaker)
    if standing:
        return standing
    s = strip_edges(raw, dialogue=speaker is not None)
    if is_formula(raw) or not s or is_question(s) or is_formula(s):
        return None
    if speaker is None:
        if not content_words(s):
            return None
        return s if s == raw else _finish(s)
    words = words_of(s)
    if any(w in SECOND_PERSON for w in words):
        return None
    if words[0] in DEICTIC or words[0] in WH | AUX | _ELIDED:
        return None
    if not noted and not any(w in FIRST_PERSON for w in words):
        # Said to an assistant, a fact about a named thing is kept (``voices``).
        said = speaker == USER and len(content_words(s)) >= MIN_CONTENT_WORDS
        return _finish(s) if said and voices.names_its_subject(s) else None
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


def statements(text: str, speaker: str | None = None) -> list[Statement]:
    """The statements of ``text``; a leading speaker label names the speaker when none is given."""
    if speaker is None:
        speaker, text = speaker_of(text)
    if speaker is None:
        return _note(text)
    out: list[Statement] = []
    for sentence in sentences(text):
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
