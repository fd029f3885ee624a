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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from halls.consolidate import voices

MIN_CONTENT_WORDS = 2

_CAPTION = re.compile(r"\s*\[image:[^\]]*\]")
# Sentence ends: . ! ? (runs of them), ; and line breaks, and a dash between
# spaces. A full stop after a known abbreviation or between digits is not one.
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+|;\s*|\n+|\s+[-\u2013\u2014]+\s+")
_ABBREV = re.compile(r"(?i)\b(?:mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|approx|no)\.$")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})

# Interjections and discourse markers: they open a sentence, carry no content.
MARKERS = frozenset(
    (  # noqa: SIM905 - one string reads better than sixty quoted words
        "hey hi hello hiya yo wow whoa woah oh ooh oooh ah aw aww awww ahh uh um hmm hm yeah yea "
        "yes yep yup no nope nah well so okay ok alright haha hahaha lol omg gosh man dude btw "
        "anyway anyways honestly oh-my sure cool great awesome nice right sweet yay also plus "
        "and but then now wait look listen see gee geez ugh phew wowza"
    ).split()
)
# Conjunctions that open a sentence tie it to the one before, nothing more.
_CONJUNCTIONS = frozenset(["and", "but", "so", "also", "plus", "then", "anyway"])
# Openers that say what reconciliation reads: an addition ("Also plays the
# piano") or a change ("Now at Bosch"). They stay with the statement.
_MEANINGFUL = frozenset(["also", "plus", "now"])
# What strip_edges drops: a marker set off by punctuation; a conjunction or
# marker before a lower-case word, but for "no" (a determiner there: "No
# prawns for Sven").
_MARKED = MARKERS - _MEANINGFUL
_UNMARKED = (_CONJUNCTIONS | MARKERS) - _MEANINGFUL - {"no"}
# Greetings, thanks, farewells, apologies, acknowledgements, congratulations
# and wishes: a sentence that opens with one is a social formula.
_FORMULA = re.compile(
    # Whole words: "hi" also opens "History", "Hiking" and "Highway".
    r"(?i)^(?:(?:hi|hiya|hello|hey|heya|greetings)\b|good (?:morning|afternoon|evening|night|day)|"
    r"(?:nice|good|great|glad|lovely|so good) (?:to|that you) (?:see|meet|hear|chat|talk|catch)|"
    r"long time no|what'?s up|how are you|how'?s it going|"
    r"thanks?\b|thank you|thx|ty\b|much appreciated|cheers|"
    r"(?:bye|goodbye|good-?bye)\b|see (?:you|ya)|take care|talk (?:soon|later|to you)|catch you|"
    r"have (?:a|an|fun)\b|enjoy (?:your|the|it)|until next time|later\b|"
    r"sorry|my apologies|apologies|"
    r"ok\b|okay|sure\b|no problem|no worries|of course|absolutely|definitely|exactly|"
    r"totally|indeed|agreed|true\b|right\b|same here|me too|will do|got it|sounds (?:good|great)|"
    r"congrat\w*|well done|good job|way to go|good luck|best of luck|all the best|keep it up|"
    r"you'?re welcome|welcome\b|anytime|"
    # The same acts said in the first person: expressive formulae.
    r"i(?:'m| am)? (?:so |really |very |truly |just )*(?:sorry|glad to hear|happy to hear|"
    r"happy for|glad (?:i|to) (?:could )?help|happy to help)|i (?:totally |completely )?"
    r"(?:couldn't|could not|can't) agree|i (?:totally |completely )?agree|i can'?t wait|"
    r"i hope so|i bet\b|i see\b|i get (?:it|that|you)|i feel you|i hear you|i know,? right|"
    # Directives: a request or suggestion to the listener is not a statement.
    r"let'?s\b|let (?:me|us|him|her|them|[A-Z])|please\b|don'?t\b|"
    # Reminiscence addressed to the listener ("Remember when we ...").
    r"remember (?:when|how|what|who|where|the time)\b)"
)
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
_WH = frozenset(["what", "why", "how", "who", "whom", "whose", "where", "when", "which"])
_AUX = frozenset(
    (  # noqa: SIM905
        "do does did are is was were am can could would will should shall may might must have has "
        "had don't doesn't didn't aren't isn't wasn't weren't can't couldn't wouldn't won't "
        "shouldn't haven't hasn't"
    ).split()
)
_SUBJECT_PRONOUNS = frozenset("i you we they he she it there this that".split())  # noqa: SIM905
SECOND_PERSON = frozenset(
    "you you're you've you'd you'll your yours yourself yourselves ya y'all u ur".split()  # noqa: SIM905
)
# Subjects that point outside the sentence (no coreference without context).
_DEICTIC = frozenset(
    (  # noqa: SIM905
        "it it's it'll it'd its that that's that'll this these those they they're they've they'll "
        "they'd he he's he'll he'd she she's she'll she'd there there's there'll here here's them"
    ).split()
)
# "us" and "ourselves" are left out: "taking care of ourselves" is about everyone.
FIRST_PERSON = frozenset(
    "i i'm i've i'd i'll me my mine myself we we're we've we'd we'll our ours".split()  # noqa: SIM905
)
# A capitalised word and a comma that is no vocative: "We, ...", "Also, ...".
_NO_VOCATIVE = FIRST_PERSON | _MEANINGFUL
_FUNCTION = frozenset(
    (  # noqa: SIM905
        "a an the of in on at to for from with by as and or but if then than so that this these "
        "those it its he she they we i you me my his her their our your him them us be been "
        "being am is are was were do does did has have had will would should can could may might "
        "must just very really also about into over under up out some any all more most much "
        "many such here there when while where which who whom what how why own same too lot "
        "lots bit quite pretty i'm i've i'd i'll it's that's there's don't doesn't didn't can't "
        "won't isn't aren't wasn't weren't not no yes so super totally truly definitely "
        "absolutely always never ever still even now then today yesterday tomorrow lately "
        "recently soon again one thing things stuff something anything everything way get got "
        "make made feel felt think thought know knew like love really mean means meant"
    ).split()
)
_NOTE_LABELS = frozenset(
    (  # noqa: SIM905 - "Note: ..." is a label, not a speaker
        "note notes todo update fix warning error re subject summary decision question answer q a "
        "reminder idea task status context result goal plan important fyi ps edit source example "
        "tip info done fixed bug feature http https step steps action"
    ).split()
)
_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s+(?=\S)")

_MODALS = frozenset(
    (  # noqa: SIM905
        "can could will would should shall may might must can't couldn't won't wouldn't "
        "shouldn't mustn't didn't wasn't did was had used ought"
    ).split()
)
_IRREGULAR_PAST = frozenset(
    (  # noqa: SIM905 - common irregular past forms: they do not take -s
        "went got had made took came saw found gave felt thought told said knew bought brought "
        "ran began became left kept met sent spent won lost wrote heard held built taught caught "
        "fought sold paid drove rode flew grew threw drew ate fell forgot sang swam sat stood "
        "understood woke wore chose broke spoke stole hid led fed slept meant dealt lit shot "
        "struck tore shook froze rose dug hung stuck did was were finally just"
    ).split()
)
_ADVERBS = frozenset(
    (  # noqa: SIM905 - adverbs that sit between "I" and its verb
        "also just still always never often usually really even finally recently actually "
        "already sometimes totally definitely truly absolutely mostly only ever kinda sorta "
        "literally generally normally currently basically honestly probably seriously "
        "certainly surely rarely hardly barely nearly almost"
    ).split()
)
_IRREGULAR_3SG = {
    "have": "has",
    "do": "does",
    "go": "goes",
    "am": "is",
    "be": "is",
    "wanna": "wants to",
    "gotta": "has to",
}
_NEG_3SG = {"don't": "doesn't", "haven't": "hasn't", "am": "is", "aren't": "isn't"}


# Clause boundaries inside one sentence of an utterance (see ``clauses``).
_SUBORDINATORS = frozenset(
    (  # noqa: SIM905
        "when whenever if unless while because since although though after before until as once"
    ).split()
)
_SO = re.compile(r",\s+so\s+(?=\w)")
# A comma before a first-person clause: "it's Sam, I never go by Samantha".
_SPLICE = re.compile(r",\s+(?=(?:I|I'm|I've|I'd|I'll|we|we're|we've)\s)")
_REASON = re.compile(r"(?i)^(?:since|because|now that)\s+((?:I|I'm|I've|we|we're)\b[^,]+),\s+(.+)$")
_ROLE = re.compile(r"^As (an?) ((?:[\w-]+ ){0,2}?[\w-]+),?\s+((?:I|we)\s+([A-Za-z']+).*)$")
# Leading phrases that mark what follows as worth keeping (a request to remember).
_MEMO = re.compile(
    r"(?i)^(?:remember(?:\s+that)?(?!\s+(?:when|how|what|who|where|the time)\b)|"
    r"keep in mind(?:\s+that)?|note that|for the record|just so you know|fyi|"
    r"for future reference|please remember(?:\s+that)?|don'?t forget(?:\s+that)?)\s*[,:]?\s+"
)
# Leading discourse phrases of several words (one-word ones are in MARKERS).
_PHRASES = re.compile(
    r"(?i)^(?:by the way|as i (?:said|mentioned)(?: before)?|as mentioned|like i said|"
    r"again|once again|to be clear|just to be clear|to clarify)\s*,\s*"
)
_CALL_ME = re.compile(r"(?i)^(?:please\s+)?call me\s+(?=[A-Z])")


def clauses(sentence: str) -> list[str]:
    """An utterance's sentence cut where it joins two statements (module docstring, 1)."""
    s = _PHRASES.sub("", sentence.strip())
    m = _REASON.match(s)
    if m:
        return [*clauses(m.group(1)), *clauses(m.group(2))]
    m = _ROLE.match(s)
    verb = m.group(4).lower() if m else ""
    past = verb.endswith("ed") and not verb.endswith("eed")
    past = past or verb in _IRREGULAR_PAST or verb in ("was", "were")
    if m and not past:
        return [f"I am {m.group(1)} {m.group(2)}", *clauses(m.group(3))]
    parts = _SO.split(s, maxsplit=1)
    if len(parts) == 2:
        # "..., so leave the sugar out": a clause with no subject is a directive.
        head = parts[1].split()[0]
        subject = head[:1].isupper() or head.lower() in FIRST_PERSON | _SUBJECT_PRONOUNS
        subject = subject or head.lower() in ("the", "a", "an")
        return [*clauses(parts[0]), *(clauses(parts[1]) if subject else [])]
    first = _words(s)[:1]
    if first and first[0] not in _SUBORDINATORS:
        parts = _SPLICE.split(s, maxsplit=1)
        if len(parts) == 2 and len(_words(parts[0])) >= 2:
            return [*clauses(parts[0]), *clauses(parts[1])]
    return [s]


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement drawn from a text: the sentence as it was, and as it is kept."""

    text: str
    sentence: str


def speaker_of(text: str) -> tuple[str | None, str]:
    """A leading speaker label ("Caroline: ...") and the rest; (None, text) if none."""
    m = _SPEAKER.match(text)
    if not m or len(m.group(1)) > 40 or m.group(1).lower() in _NOTE_LABELS:
        return None, text
    rest = text[m.end() :]
    if _noted(m.group(1), rest):
        return None, text
    return m.group(1), rest


NOTE_WORDS = 6  # a label's value up to this long, with no person speaking, can be a note


def _noted(label: str, rest: str) -> bool:
    """Whether a label heads an agent's note about it, not words it says.

    "User: vegetarian", "User: editor theme dark, not light": the user's own
    words speak in the first person ("User: I moved to Leeds"). So with any
    other label, when the value is a short phrase, not a sentence: no person
    speaks in it, it ends in no full stop, exclaims or asks nothing, opens
    with no marker, question word or pointing pronoun, and has no auxiliary
    ("Emma: cat allergy", "ISP: Virgin Media", "Mia: swim practice Tue 4pm";
    not "Priya: The mountains were stunning.", "Priya: How's the garden
    coming along"). Of LoCoMo's 2,760 dev turns, none is so. Read as a turn,
    such a note says nothing of its speaker and was dropped.
    """
    words = _words(rest)
    if not words or FIRST_PERSON.intersection(words):
        return False
    if label.lower() == "user":
        return True
    first = words[0].split("'")[0]
    return (
        len(rest.split()) <= NOTE_WORDS
        and not rest.rstrip().endswith(".")
        and not set("!?") & set(rest)
        and first not in MARKERS | _WH | _DEICTIC
        and not (SECOND_PERSON | _AUX).intersection(words)
        and not is_formula(rest)
        and not _MEMO.match(rest)
    )


def sentences(text: str) -> list[str]:
    """Sentences of ``text``, captions and bullets removed, end punctuation kept."""
    text = _CAPTION.sub("", text.translate(_APOSTROPHES))
    out: list[str] = []
    carry = ""
    for piece in _SPLIT.split(text):
        piece = _BULLET.sub("", piece.strip())
        if not piece:
            continue
        if _ABBREV.search(piece):
            carry += piece + " "
            continue
        out.append(carry + piece)
        carry = ""
    if carry.strip():
        out.append(carry.strip())
    return out


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def strip_edges(sentence: str, dialogue: bool = True) -> str:
    """The sentence without leading markers, formulas set off by commas, or vocatives.

    Vocatives are read only in ``dialogue``: a note addresses no one, so
    "..., Pepper" there is the name of what it speaks of.
    """
    s = sentence.strip().strip("\"'")
    while True:
        before = s
        m = re.match(r"^([A-Za-z']+)(?:[,!.]+\s*|\s+(?=[A-Z]))", s)
        if m and m.group(1).lower() in _MARKED:
            s = s[m.end() :]
        m = re.match(r"^([A-Za-z]+)\s+(?=[a-z])", s)
        if m and m.group(1).lower() in _UNMARKED:
            s = s[m.end() :]
        # A formula set off by a comma: "Thanks, ...", "No worries, ...".
        m = re.match(r"^([^,]{1,30}),\s+", s)
        if m and _FORMULA.match(m.group(1)) and _words(m.group(1))[-1:] != ["to"]:
            s = s[m.end() :]
        # A vocative: a capitalised name and a comma ("Caroline, that's ...").
        m = re.match(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)?[,!]\s*", s)
        apposition = re.match(r"^[A-Z][a-z]+, (?:my|our|his|her|their|the) [^,]{1,30}, ", s)
        name = m.group(0).split(",")[0].split("!")[0].lower() if m else ""
        if dialogue and m and not apposition and name not in _NO_VOCATIVE:
            s = s[m.end() :]
        if s == before:
            break
    if dialogue:  # a trailing vocative: "..., Mel!" / "... Jon."
        s = re.sub(r",\s*[A-Z][a-z]+(?: [A-Z][a-z]+)?\s*([.!?]*)$", r"\1", s)
    return s.strip()


def is_question(sentence: str) -> bool:
    if sentence.rstrip().endswith("?"):
        return True
    words = _words(sentence)
    if len(words) >= 2 and words[0] in _WH | _AUX and words[1] in _SUBJECT_PRONOUNS:
        return True
    return len(words) >= 1 and words[0] in _WH and words[0] not in ("when", "while")


def is_formula(sentence: str) -> bool:
    return not _words(sentence) or bool(_FORMULA.match(sentence.strip()))


def content_words(sentence: str, exclude: frozenset[str] = frozenset()) -> list[str]:
    return [
        w
        for w in _words(sentence)
        if w not in _FUNCTION
        and w not in MARKERS
        and w not in FIRST_PERSON
        and w not in SECOND_PERSON
        and w not in exclude
        and not w.isdigit()
    ]


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in _NEG_3SG:
        return _NEG_3SG[low]
    if low in _IRREGULAR_3SG:
        return _IRREGULAR_3SG[low]
    past = low.endswith("ed") and not low.endswith("eed")
    if low in _MODALS or low in _IRREGULAR_PAST or past or "'" in low or low == "gonna":
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, name: str) -> str:
    """Rewrite the first person as ``name`` (see the module docstring)."""
    lower = name[0].lower() + name[1:] if name.lower().startswith("the ") else name

    def fix_i(m: re.Match[str]) -> str:
        adverbs, verb = m.group(1) or "", m.group(2)
        return f"{lower} {adverbs}{_third_person(verb)}"

    s = sentence
    s = re.sub(r"\bI'm\b|\bI am\b", f"{lower} is", s)
    s = re.sub(r"\bI've\b", f"{lower} has", s)
    s = re.sub(r"\bI'd(?= been\b| better\b)", f"{lower} had", s)
    s = re.sub(r"\bI'd\b", f"{lower} would", s)
    s = re.sub(r"\bI'll\b", f"{lower} will", s)
    adv = "|".join(sorted(_ADVERBS))
    s = re.sub(rf"\bI ((?:(?:{adv}) )*)([A-Za-z']+)", fix_i, s)
    s = re.sub(r"\bI\b", lower, s)
    s = re.sub(r"(?i)\bmy\b|\bmine\b", f"{lower}'s", s)
    s = re.sub(r"(?i)(?<![\w-])(?:myself|me)(?![\w-])", lower, s)
    s = re.sub(r"(?i)\bwe're\b", f"{lower} and others are", s)
    s = re.sub(r"(?i)\bwe've\b", f"{lower} and others have", s)
    s = re.sub(r"(?i)\bwe'll\b", f"{lower} and others will", s)
    s = re.sub(r"(?i)\bwe'd\b", f"{lower} and others would", s)
    s = re.sub(r"(?i)\bwe\b|\bus\b", f"{lower} and others", s)
    s = re.sub(r"(?i)\bours?\b", f"{lower}'s", s)
    s = re.sub(r"(?i)\bourselves\b", "themselves", s)
    return s


# Who speaks in the journal's user turns: the memory's owner, talking to an assistant.
USER = "The user"
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
        m = _MEMO.match(raw)
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
    words = _words(s)
    if any(w in SECOND_PERSON for w in words):
        return None
    if words[0] in _DEICTIC or words[0] in _WH | _AUX | _ELIDED:
        return None
    if not noted and not any(w in FIRST_PERSON for w in words):
        # Said to an assistant, a fact about a named thing is kept (``voices``).
        said = speaker == USER and len(content_words(s)) >= MIN_CONTENT_WORDS
        return _finish(s) if said and voices.names_its_subject(s) else None
    name_words = frozenset(_words(speaker))
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
    plain = _CAPTION.sub("", text.translate(_APOSTROPHES))
    out: list[Statement] = []
    follows = False  # whether the sentence before was kept
    for sentence in sentences(text):
        kept = statement(sentence, None)
        points_back = follows and _words(sentence)[:1] in ([w] for w in _BACK)
        follows = bool(kept)
        if not kept:
            continue
        if not points_back:
            out.append(Statement(kept, sentence))
            continue
        # The two as the note wrote them ("...; he ...", "... - its ..."); a
        # list's items stand alone.
        before = out[-1]
        start = plain.find(before.sentence)
        end = plain.find(sentence, start + len(before.sentence)) if start >= 0 else -1
        if end >= 0 and "\n" in plain[start:end]:
            out.append(Statement(kept, sentence))
        elif end < 0 or before.text != before.sentence:
            out[-1] = Statement(f"{before.text.rstrip(' .;')}; {kept}", before.sentence)
        else:
            both = plain[start : end + len(sentence)]
            out[-1] = Statement(both, both)
    return out
