"""The texts of records named by id, of any tier, in one call.

A consolidation run names its inputs by id only (short-term entries,
journal events, briefs, facts); a reader of the run (the viewer) wants
what they said. A record that has since been deleted or purged is listed
under ``missing``, not an error: a run outlives what it read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from halls.errors import InvalidInput
from halls.models import ID_RE, Brief
from halls.store.base import Store

# Enough for every input of one action of a run; a page asks per action.
MAX_TEXT_IDS = 200

TextTier = Literal["short", "near", "long", "journal", "brief"]
_TIER: dict[str, TextTier] = {
    "s": "short",
    "n": "near",
    "l": "long",
    "j": "journal",
    "b": "brief",
}


class RecordText(BaseModel):
    id: str
    tier: TextTier
    text: str = Field(
        description="An entry's, event's or fact's content, a loop's intent, a brief's summary."
    )
    status: str | None = Field(default=None, description="A loop's or fact's status.")


class RecordTexts(BaseModel):
    records: list[RecordText] = Field(description="The records found, in the order asked.")
    missing: list[str] = Field(description="Ids asked for that are not (or no longer) stored.")


def _brief_text(brief: Brief) -> str:
    hints = f" · promote: {', '.join(brief.promote_hints)}" if brief.promote_hints else ""
    return brief.summary + hints


def record_texts(store: Store, ids: list[str]) -> RecordTexts:
    """The text of each id (duplicates asked once), found ones first in the order asked."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        raise InvalidInput("give at least one id")
    if len(wanted) > MAX_TEXT_IDS:
        raise InvalidInput(f"at most {MAX_TEXT_IDS} ids at a time")
    for i in wanted:
        m = ID_RE.match(i)
        if not m or m.group("prefix") not in _TIER:
            raise InvalidInput(f"'{i[:80]}' is not a record id")
    found: dict[str, RecordText] = {}
    for rid, rec in store.get_records([i for i in wanted if i[0] in "snl"]).items():
        text = getattr(rec, "content", "")
        status = getattr(rec, "status", None)
        found[rid] = RecordText(id=rid, tier=_TIER[rid[0]], text=text, status=status)
    for rid in wanted:
        if rid[0] == "j" and (event := store.get_journal(rid)) is not None:
            found[rid] = RecordText(id=rid, tier="journal", text=event.content)
        elif rid[0] == "b" and (brief := store.get_brief(rid)) is not None:
            found[rid] = RecordText(id=rid, tier="brief", text=_brief_text(brief))
    return RecordTexts(
        records=[found[i] for i in wanted if i in found],
        missing=[i for i in wanted if i not in found],
    )
