"""Dialogue acts (pure): what a sentence does, read off its form.

The word classes the statement rules read (markers, formulas, question
words, auxiliaries, first, second and pointing pronouns, function words) and
the tests built on them: ``strip_edges`` (the edges that carry no content),
``is_question``, ``is_formula`` and ``content_words``. No list of known
sentences: the classes are closed-class words and the shapes of social
formulas (``halls.consolidate.extract``'s docstring, 2 and 3).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+")

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
WH = frozenset(["what", "why", "how", "who", "whom", "whose", "where", "when", "which"])
AUX = frozenset(
    (  # noqa: SIM905
        "do does did are is was were am can could would will should shall may might must have has "
        "had don't doesn't didn't aren't isn't wasn't weren't can't couldn't wouldn't won't "
        "shouldn't haven't hasn't"
    ).split()
)
SUBJECT_PRONOUNS = frozenset("i you we they he she it there this that".split())  # noqa: SIM905
SECOND_PERSON = frozenset(
    "you you're you've you'd you'll your yours yourself yourselves ya y'all u ur".split()  # noqa: SIM905
)
# Subjects that point outside the sentence (no coreference without context).
DEICTIC = frozenset(
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
# Words that make a request hold from now on ("always run ruff", "never push to main").
STANDING = re.compile(
    r"(?i)\b(?:always|never|ever|from now on|going forward|in (?:the )?future|by default|"
    r"every time|whenever)\b"
)
# Leading phrases that mark what follows as worth keeping (a request to remember).
MEMO = re.compile(
    r"(?i)^(?:remember(?:\s+that)?(?!\s+(?:when|how|what|who|where|the time)\b)|"
    r"keep in mind(?:\s+that)?|note that|for the record|just so you know|fyi|"
    r"for future reference|please remember(?:\s+that)?|don'?t forget(?:\s+that)?)\s*[,:]?\s+"
)


def words_of(text: str) -> list[str]:
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
        if m and _FORMULA.match(m.group(1)) and words_of(m.group(1))[-1:] != ["to"]:
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
    words = words_of(sentence)
    if len(words) >= 2 and words[0] in WH | AUX and words[1] in SUBJECT_PRONOUNS:
        return True
    return len(words) >= 1 and words[0] in WH and words[0] not in ("when", "while")


def is_formula(sentence: str) -> bool:
    return not words_of(sentence) or bool(_FORMULA.match(sentence.strip()))


def content_words(sentence: str, exclude: frozenset[str] = frozenset()) -> list[str]:
    return [
        w
        for w in words_of(sentence)
        if w not in _FUNCTION
        and w not in MARKERS
        and w not in FIRST_PERSON
        and w not in SECOND_PERSON
        and w not in exclude
        and not w.isdigit()
    ]
