"""What a run clusters (pure): statements from short-term entries, the journal and briefs.

A run reads three kinds of source and turns each into *units*: one
statement each, with the records it came from (its provenance) and the time
it was said. Units, not raw texts, are what the evidence, cluster and
reconcile steps see, so

- a conversation turn held in short-term memory ("Caroline: Hey Mel! I'm
  looking into counseling.") yields the statements it makes, rewritten to
  stand alone ("Caroline is looking into counseling."), and none for its
  greetings and questions (``halls.consolidate.extract``);
- the journal becomes memory: the events of the window (see below) are
  grouped into sessions, and the statements of the user's own turns (role
  ``user``, or no role) join the same clusters, with the journal ids as
  provenance; the assistant's, tools' and system's events are not the
  user's statements and are skipped;
- a brief's ``summary`` is read as a note, with the brief's id as provenance.

Journal events and briefs are read over a window (``journal_window_seconds``
back from the run, like a short-term entry's lifetime), not only since the
last run: a preference stated once a day reaches the evidence gate on the
second day only if the first day's statement is still seen. A journal event
or brief that a fact already derives from is consumed and not read again,
as a short-term entry consolidated into a fact is not.

An ``Extractor`` draws the statements of a batch of utterances (one
session); the local one applies ``extract``'s rules, the llm engine's asks
its endpoint and falls back to the local one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from halls.consolidate import progress
from halls.consolidate.extract import statements
from halls.consolidate.segment import sentences
from halls.consolidate.speaker import USER, speaker_of, speakers_in
from halls.models import Brief, JournalEvent, ShortEntry

SESSION_GAP_SECONDS = 1800.0  # journal events further apart than this start a new session
# Journal roles whose events are the user's own words or plain notes.
_USER_ROLES = {"user", "human"}
_NOTE_ROLES = {None, "", "note", "event", "outcome"}


@dataclass
class Unit:
    """One statement to cluster, with where it came from."""

    content: str
    occurred_at: datetime
    entries: list[str] = field(default_factory=list)  # short-term ids
    journal: list[str] = field(default_factory=list)  # journal (j_) and brief (b_) ids
    topic: str | None = None
    pinned: bool = False
    # The entry's importance (halls.importance): a promoted fact keeps the highest.
    importance: float | None = None
    # The work scope it was written for (halls.scopes): a fact takes its sources' most common.
    scope: str | None = None
    row: int | None = None  # the entry's row whose stored vector is this text's, if any
    told: bool = False  # the user said it to an assistant (``speaker.USER``)


@dataclass(frozen=True, slots=True)
class Utterance:
    """What an extractor reads: a text and who said it (None: a note)."""

    text: str
    speaker: str | None


class Extractor(Protocol):
    def extract(self, batch: Sequence[Utterance]) -> list[list[str]]:
        """The statements of each utterance of one session, in order."""
        ...


class LocalExtractor:
    """The rules of ``halls.consolidate.extract``: no model."""

    name = "rules"

    def extract(self, batch: Sequence[Utterance]) -> list[list[str]]:
        out: list[list[str]] = []
        for n, u in enumerate(progress.each("extracting", batch)):
            # A speaker's turn right before is where a "she" may be named.
            last = batch[n - 1] if n else None
            same = last is not None and u.speaker is not None and last.speaker == u.speaker
            before = sentences(last.text) if last is not None and same else []
            out.append([s.text for s in statements(u.text, u.speaker, before)])
        return out


def utterance(
    text: str,
    metadata: dict[str, object],
    role: str | None = None,
    speakers: Collection[str] = (),
) -> Utterance | None:
    """Who speaks in a record: a ``speaker`` in metadata, a role, a label, or nobody.
    ``speakers``: labels known to speak in the batch (``speaker.speakers_in``)."""
    named = metadata.get("speaker")
    if isinstance(named, str) and named.strip():
        return Utterance(speaker_of(text)[1] if speaker_of(text)[0] == named else text, named)
    if role is not None and role.lower() in _USER_ROLES:
        # A transcript line may repeat its role as a label ("user: ..."): the
        # same words as the turn without it, so one statement, not two.
        return Utterance(re.sub(rf"(?i)^\s*{re.escape(role)}\s*:\s+", "", text), USER)
    if role is not None and role.lower() not in _NOTE_ROLES:
        return None  # the assistant's, a tool's or the system's words are not the user's
    speaker, rest = speaker_of(text, speakers)
    if speaker is not None and speaker.lower() == "user":
        return Utterance(rest, USER)
    return Utterance(rest, speaker) if speaker else Utterance(text, None)


def journal_sessions(events: Sequence[JournalEvent]) -> list[list[JournalEvent]]:
    """Events grouped by ``session_id``, else by gaps of more than ``SESSION_GAP_SECONDS``."""
    groups: dict[str, list[JournalEvent]] = {}
    loose: list[list[JournalEvent]] = []
    for e in sorted(events, key=lambda e: e.occurred_at):
        if e.session_id:
            groups.setdefault(e.session_id, []).append(e)
            continue
        last = loose[-1][-1] if loose else None
        gap = (e.occurred_at - last.occurred_at).total_seconds() if last else None
        if gap is None or gap > SESSION_GAP_SECONDS:
            loose.append([e])
        else:
            loose[-1].append(e)
    return sorted([*groups.values(), *loose], key=lambda s: (s[0].occurred_at, s[0].id))


def from_entries(
    entries: Sequence[ShortEntry], rows: Sequence[int], extractor: Extractor
) -> list[Unit]:
    """Units of the short-term entries at ``rows`` (an entry whose only statement is
    its own text keeps its stored vector)."""
    # A label that speaks in one entry speaks in all: "Leila Haddad: nooo" is
    # her turn beside "Leila Haddad: I moved to Austin", not a note about her.
    speakers = speakers_in(entries[n].content for n in rows)
    said = [utterance(entries[n].content, entries[n].metadata, speakers=speakers) for n in rows]
    batch = [u for u in said if u is not None]
    found = iter(extractor.extract(batch)) if batch else iter([])
    out: list[Unit] = []
    for n, u in zip(rows, said, strict=True):
        if u is None:
            continue
        e = entries[n]
        texts = next(found)
        refs = [e.source or "", str(e.metadata.get("journal_id", ""))]
        journal = list(dict.fromkeys(r for r in refs if r.startswith("j_")))
        for text in texts:
            out.append(
                Unit(
                    content=text,
                    occurred_at=e.occurred_at,
                    entries=[e.id],
                    journal=journal,
                    topic=e.topic,
                    pinned=e.pinned,
                    importance=e.importance,
                    scope=e.scope,
                    row=n if text == e.content.strip() else None,
                    told=u.speaker == USER,
                )
            )
    return out


def from_journal(events: Iterable[JournalEvent], extractor: Extractor) -> list[Unit]:
    """Units of the user's statements in journal events, one extractor call per session."""
    out: list[Unit] = []
    for session in journal_sessions(list(events)):
        said = [(e, utterance(e.content, e.metadata, e.role)) for e in session]
        kept = [(e, u) for e, u in said if u is not None]
        if not kept:
            continue
        for (e, u), texts in zip(kept, extractor.extract([u for _, u in kept]), strict=True):
            out += [
                Unit(
                    content=t,
                    occurred_at=e.occurred_at,
                    journal=[e.id],
                    topic=e.topic,
                    scope=e.scope,
                    told=u.speaker == USER,
                )
                for t in texts
            ]
    return out


def from_briefs(briefs: Iterable[Brief], extractor: Extractor) -> list[Unit]:
    """Units of the statements in briefs' summaries (notes; the brief is the provenance)."""
    out: list[Unit] = []
    for b in briefs:
        (texts,) = extractor.extract([Utterance(b.summary, None)])
        out += [Unit(content=t, occurred_at=b.created_at, journal=[b.id]) for t in texts]
    return out
