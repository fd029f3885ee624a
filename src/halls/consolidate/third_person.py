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
