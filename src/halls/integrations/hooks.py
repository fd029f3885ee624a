"""What the Claude Code hooks do when they run (``halls hook EVENT``).

Each reads the hook's JSON from stdin and answers on stdout, in the ways
Claude Code listens to: for SessionStart and UserPromptSubmit, plain stdout
is added to the model's context; for Stop, a ``{"decision": "block"}``
object with a reason is the only output the model sees; PreCompact output
is not shown, so it only submits a brief. A hook must never break a
session: every failure is one line on stderr and a zero exit.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from halls.mcp.backend import RemoteBackend
from halls.models import SCOPE_PATTERN

RECALL_REMINDER = (
    "halls memory: if this request may depend on earlier sessions (the user's preferences, "
    "past decisions, project facts), call the halls `recall` tool before answering."
)
REMEMBER_REMINDER = (
    "Before you finish: did this turn produce something worth keeping for future sessions "
    "(a decision and its reason, a preference, a fact about the project, a promised "
    "follow-up)? If so, save it now with the halls `remember` tool, or `loops` for a follow-up, "
    "one self-contained sentence each. If not, just stop."
)
# Tools that already saved something this turn: no need to remind.
WRITE_TOOLS = ("remember", "loops", "journal", "submit_brief")
MAX_PROMPTS = 10
MAX_PROMPT_CHARS = 240
PROMPT_MEMORIES_HEADER = "halls memories that may bear on this request:"
PROMPT_MEMORIES = 3
# The journal keeps what the API accepts (MAX_CONTENT_CHARS); longer prompts
# are mostly pasted material, and their start says what they are.
MAX_JOURNAL_CHARS = 32768
# Reading the git remote must never hold up a session start.
GIT_TIMEOUT_S = 2.0


def estimate_tokens(text: str) -> int:
    """About one token per four characters, as /context estimates without a tokenizer.

    Local, not imported from the service: a hook must start without loading it.
    """
    return -(-len(text) // 4)


def read_input(raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _entries(transcript: str | None) -> Iterator[dict[str, Any]]:
    if not transcript:
        return
    try:
        lines = Path(transcript).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


def _blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _prompt_text(entry: dict[str, Any]) -> str | None:
    """The user's own words in an entry, or None (tool results are not prompts)."""
    if entry.get("type") != "user" or entry.get("isMeta"):
        return None
    texts = [str(b.get("text", "")) for b in _blocks(entry) if b.get("type") == "text"]
    text = " ".join(t for t in texts if t.strip()).strip()
    return text or None


def last_turn_tools(transcript: str | None) -> list[str]:
    """Names of the tools called since the user's last prompt."""
    names: list[str] = []
    for entry in _entries(transcript):
        if _prompt_text(entry) is not None:
            names = []
        elif entry.get("type") == "assistant":
            names += [str(b.get("name")) for b in _blocks(entry) if b.get("type") == "tool_use"]
    return names


def user_prompts(transcript: str | None) -> list[str]:
    return [p for e in _entries(transcript) if (p := _prompt_text(e)) is not None]


def stop_decision(event: dict[str, Any]) -> dict[str, str] | None:
    """Remind once per turn, and only after a turn that did work but saved nothing."""
    if event.get("stop_hook_active"):
        return None
    tools = last_turn_tools(event.get("transcript_path"))
    if not tools:
        return None
    if any(name == t or name.endswith(f"__{t}") for name in tools for t in WRITE_TOOLS):
        return None
    return {"decision": "block", "reason": REMEMBER_REMINDER}


def brief_summary(event: dict[str, Any]) -> str | None:
    prompts = user_prompts(event.get("transcript_path"))[-MAX_PROMPTS:]
    if not prompts:
        return None
    where = f" in {Path(str(event['cwd'])).name}" if event.get("cwd") else ""
    lines = [
        f"Claude Code session{where} before {event.get('trigger', 'a')} compaction; the user asked:"
    ]
    for prompt in prompts:
        flat = " ".join(prompt.split())
        short = flat if len(flat) <= MAX_PROMPT_CHARS else flat[:MAX_PROMPT_CHARS] + "…"
        lines.append(f"- {short}")
    return "\n".join(lines)


def _git(cwd: str, *args: str) -> str:
    """What a git command prints in ``cwd``, stripped; "" when git fails or is missing."""
    try:
        return subprocess.run(
            ["git", "-C", cwd, *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _git_remote_name(cwd: str) -> str | None:
    """The repository name of the ``origin`` remote (``acme/web.git`` -> ``web``), if any."""
    out = _git(cwd, "config", "--get", "remote.origin.url")
    name = re.sub(r"\.git$", "", out.rstrip("/")).rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name or None


def project_of(event: dict[str, Any]) -> str | None:
    """What the session works on: the directory's name, and the git remote's when it differs."""
    cwd = event.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    names = [Path(cwd).name, _git_remote_name(cwd)]
    unique = list(dict.fromkeys(n for n in names if n))
    return " ".join(unique)[:200] or None


def _git_branch(cwd: str) -> str | None:
    """The checked-out branch, or None (not a repository, or a detached HEAD)."""
    out = _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    return out if out and out != "HEAD" else None


def scope_of(event: dict[str, Any]) -> str | None:
    """The work scope a session is in: the directory's name and the git branch
    (``web/fix-login``), or the name alone outside a branch; made to fit a scope's
    name (``halls.scopes``), or None when nothing of it does."""
    cwd = event.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    parts = [Path(cwd).name, _git_branch(cwd)]
    raw = "/".join(p for p in parts if p)
    name = re.sub(r"[^A-Za-z0-9._/:#-]+", "-", raw).lstrip("._/:#-")[:128]
    return name if re.match(SCOPE_PATTERN, name) else None


def first_prompt(event: dict[str, Any]) -> str | None:
    """The session's first prompt, when the transcript has one (a cleared or compacted session)."""
    prompts = user_prompts(event.get("transcript_path"))
    return " ".join(prompts[0].split())[:MAX_PROMPT_CHARS] if prompts else None


def journal_prompt(event: dict[str, Any], backend: RemoteBackend, store: str | None) -> None:
    """Append the user's prompt to the journal (secrets and personal data are redacted there)."""
    prompt = str(event.get("prompt") or "").strip()
    if not prompt:
        return
    item: dict[str, Any] = {"content": prompt[:MAX_JOURNAL_CHARS], "role": "user"}
    if isinstance(event.get("session_id"), str) and event["session_id"]:
        item["session_id"] = event["session_id"][:200]
    # Each prompt is a turn of the session's work scope (halls.scopes).
    scope = scope_of(event)
    if scope is not None:
        item["scope"] = scope
    backend.journal([item], store=store)


def prompt_memories(
    event: dict[str, Any], backend: RemoteBackend, store: str | None, budget_tokens: int
) -> str:
    """The few memories most relevant to the prompt, within ``budget_tokens`` (estimated)."""
    prompt = str(event.get("prompt") or "").strip()
    if not prompt:
        return ""
    found = backend.search(
        prompt[: MAX_PROMPT_CHARS * 4],
        store=store,
        n_results=PROMPT_MEMORIES,
        tiers=None,
        topic=None,
    )
    lines = [PROMPT_MEMORIES_HEADER]
    used = estimate_tokens(PROMPT_MEMORIES_HEADER)
    for hit in found.get("results", []):
        line = "- " + " ".join(str(hit.get("content", "")).split())[:MAX_PROMPT_CHARS]
        if used + estimate_tokens(line) > budget_tokens:
            break
        lines.append(line)
        used += estimate_tokens(line)
    return "\n".join(lines) if len(lines) > 1 else ""


def run(
    name: str,
    event: dict[str, Any],
    backend: RemoteBackend,
    store: str | None,
    budget_tokens: int,
    prompt_tokens: int = 0,
    journal: bool = True,
    format: str = "terse",
) -> str:
    """Perform hook ``name``; return what to print on stdout.

    ``prompt_tokens`` > 0 makes UserPromptSubmit add the memories most relevant
    to the prompt (within that many tokens) before the reminder; 0, the
    default, sends the reminder alone. With ``journal`` (the default) it also
    appends the prompt to the journal, where consolidation finds what the user
    states about themself and their work. ``format`` is the SessionStart
    block's notation: terse (the default; ``docs/benchmarks.md`` measures what
    it saves) or verbose.
    """
    if name == "session-start":
        block = backend.context(
            store=store,
            query=first_prompt(event),
            project=project_of(event),
            budget_tokens=budget_tokens,
            format=format,
            scope=scope_of(event),
        )
        return str(block.get("text") or "")
    if name == "user-prompt":
        if journal:
            journal_prompt(event, backend, store)
        if prompt_tokens <= 0:
            return RECALL_REMINDER
        memories = prompt_memories(event, backend, store, prompt_tokens)
        return f"{memories}\n\n{RECALL_REMINDER}" if memories else RECALL_REMINDER
    if name == "stop":
        decision = stop_decision(event)
        return json.dumps(decision) if decision else ""
    if name == "pre-compact":
        summary = brief_summary(event)
        if summary:
            backend.submit_brief(summary, store=store, promote_hints=[], completed_intents=[])
        return ""
    raise ValueError(f"unknown hook {name}")


HOOKS = ("session-start", "user-prompt", "stop", "pre-compact")
