"""The third person (pure): a speaker's first-person sentence told of them by name.

"I've moved to Leeds" said by Ana reads "Ana has moved to Leeds": pronouns
become the name, and a verb after "I" takes its third-person form ("love" ->
"loves", "study" -> "studies"; past forms and modals stay). See
``halls.consolidate.extract``'s docstring, 4.
"""

from __future__ import annotations

import re

_MODALS = frozenset(
    (  # noqa: SIM905
        "can could will would should shall may might must can't couldn't won't wouldn't "
        "shouldn't mustn't didn't wasn't did was had used ought"
    ).split()
)
IRREGULAR_PAST = frozenset(
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


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in _NEG_3SG:
        return _NEG_3SG[low]
    if low in _IRREGULAR_3SG:
        return _IRREGULAR_3SG[low]
    past = low.endswith("ed") and not low.endswith("eed")
    if low in _MODALS or low in IRREGULAR_PAST or past or "'" in low or low == "gonna":
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


# First-person forms, in the order they are tried at one place of a sentence;
# each becomes the name the first time and a pronoun after it (``_FORMS``).
_ADV = "|".join(sorted(_ADVERBS))
_FIRST = re.compile(
    r"\b(?P<im>I'm|I am)\b|\b(?P<ive>I've)\b|\b(?P<idhad>I'd)(?= been\b| better\b)"
    r"|\b(?P<id>I'd)\b|\b(?P<ill>I'll)\b"
    rf"|\bI (?P<adv>(?:(?:{_ADV}) )*)(?P<verb>[A-Za-z']+)|\b(?P<i>I)\b"
    r"|(?i:\b(?P<my>my)\b|\b(?P<mine>mine)\b|(?<![\w-])(?P<myself>myself)(?![\w-])"
    r"|(?<![\w-])(?P<me>me)(?![\w-])"
    r"|\b(?P<were>we're)\b|\b(?P<weve>we've)\b|\b(?P<well>we'll)\b|\b(?P<wed>we'd)\b"
    r"|\b(?P<we>we|us)\b|\b(?P<our>ours?)\b|\b(?P<ourselves>ourselves)\b)"
)
# Each form: (the first mention, with {n} the name; a later one). A later
# possessive is "their", singular for the speaker ("Priya finished their
# thesis"; it guesses no one's gender); a later subject or object stays the
# name ("Priya thinks Priya was wrong"), and "we" and "us" stay "Priya and
# others": a "they" or "them" there could point anywhere (``standalone``).
_FORMS = {
    "im": ("{n} is", "{n} is"),
    "ive": ("{n} has", "{n} has"),
    "idhad": ("{n} had", "{n} had"),
    "id": ("{n} would", "{n} would"),
    "ill": ("{n} will", "{n} will"),
    "i": ("{n}", "{n}"),
    "my": ("{n}'s", "their"),
    "mine": ("{n}'s", "theirs"),
    "myself": ("{n}", "themselves"),
    "me": ("{n}", "{n}"),
    "were": ("{n} and others are", "{n} and others are"),
    "weve": ("{n} and others have", "{n} and others have"),
    "well": ("{n} and others will", "{n} and others will"),
    "wed": ("{n} and others would", "{n} and others would"),
    "we": ("{n} and others", "{n} and others"),
    "our": ("{n}'s", "their"),
    "ourselves": ("themselves", "themselves"),
}


def third_person(sentence: str, name: str) -> str:
    """Rewrite the first person as ``name`` (see the module docstring): the name at
    its first mention, a possessive after it "their" ("I finished my thesis" ->
    "Priya finished their thesis"; "we painted our fence" -> "Priya and others
    painted their fence")."""
    lower = name[0].lower() + name[1:] if name.lower().startswith("the ") else name
    named = False

    def one(m: re.Match[str]) -> str:
        nonlocal named
        first, named = not named, True
        if m.group("verb") is not None:
            adverbs, verb = m.group("adv") or "", m.group("verb")
            return f"{lower} {adverbs}{_third_person(verb)}"
        form = next(k for k, v in m.groupdict().items() if v is not None and k in _FORMS)
        at_first, later = _FORMS[form]
        return (at_first if first else later).format(n=lower)

    return _FIRST.sub(one, sentence)
