"""A scripted multi-session conversation: what a coding agent's user says over 200 turns.

Seeded facts (about the user, their people and their projects), later
changes to some of them, and chit-chat (greetings, questions, thanks) that
should leave no fact, in ten sessions of twenty turns. Each seeded fact
comes with a question and the word an answer must hold; a change replaces
its fact's answer. Used by ``halls bench context`` and by the test of the
hot set over a long session (``tests/test_hot_http.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

SESSIONS = 10
TURNS_PER_SESSION = 20


@dataclass(frozen=True)
class Seeded:
    """A statement the user makes, a question about it, and the word its answer holds."""

    key: str
    text: str
    question: str
    answer: str


FACTS = [
    Seeded(
        "tabs", "I prefer tabs over spaces in Python code.", "tabs or spaces in Python?", "tabs"
    ),
    Seeded(
        "pg",
        "Our staging database runs PostgreSQL 16 on port 5433.",
        "which port does the staging database use?",
        "5433",
    ),
    Seeded("sister", "My sister Priya lives in Leeds.", "where does Priya live?", "Leeds"),
    Seeded(
        "release",
        "We deploy the web app with make release after the tests pass.",
        "how is the web app deployed?",
        "make release",
    ),
    Seeded(
        "orders", "The orders service is owned by Dana.", "who owns the orders service?", "Dana"
    ),
    Seeded("veg", "I am vegetarian.", "is the user vegetarian?", "vegetarian"),
    Seeded(
        "commits",
        "Always write commit messages in the imperative mood.",
        "how should commit messages be written?",
        "imperative",
    ),
    Seeded(
        "ci",
        "The CI runner has 4 cores and 16 GB of memory.",
        "how many cores does the CI runner have?",
        "4 cores",
    ),
    Seeded("dog", "My dog is called Biscuit.", "what is the user's dog called?", "Biscuit"),
    Seeded("editor", "My code editor is Neovim.", "which editor does the user use?", "Neovim"),
    Seeded(
        "tz",
        "I work from Lisbon, in the WET time zone.",
        "which city does the user work from?",
        "Lisbon",
    ),
    Seeded(
        "lint",
        "The monorepo is linted with ruff and typed with mypy.",
        "which linter does the monorepo use?",
        "ruff",
    ),
    Seeded(
        "standup",
        "Our team standup is at 09:30 every weekday.",
        "when is the team standup?",
        "09:30",
    ),
    Seeded(
        "payments",
        "The payments service is written in Go.",
        "what language is the payments service written in?",
        "Go",
    ),
    Seeded(
        "queue",
        "The billing jobs run on a RabbitMQ queue called invoices.",
        "which queue do the billing jobs use?",
        "RabbitMQ",
    ),
    Seeded("coffee", "I drink my coffee black.", "how does the user take coffee?", "black"),
    Seeded(
        "node",
        "The frontend builds with Node 20 and pnpm.",
        "which package manager does the frontend use?",
        "pnpm",
    ),
    Seeded(
        "oncall",
        "Kenji is on call for the search cluster.",
        "who is on call for the search cluster?",
        "Kenji",
    ),
    Seeded(
        "bucket",
        "Backups go to the S3 bucket acme-backups-eu.",
        "where do backups go?",
        "acme-backups-eu",
    ),
    Seeded(
        "retro",
        "Our sprint retrospectives are held on Fridays.",
        "when are sprint retrospectives held?",
        "Fridays",
    ),
    Seeded(
        "python",
        "The API targets Python 3.12.",
        "which Python version does the API target?",
        "3.12",
    ),
    Seeded(
        "bike",
        "I cycle to the office on Tuesdays.",
        "how does the user get to the office on Tuesdays?",
        "cycle",
    ),
    Seeded(
        "docs",
        "Design documents live in the Notion space called Atlas.",
        "where do design documents live?",
        "Notion",
    ),
    Seeded(
        "flags", "Feature flags are managed with Unleash.", "what manages feature flags?", "Unleash"
    ),
    Seeded(
        "reviews",
        "Every pull request needs two approvals before merging.",
        "how many approvals does a pull request need?",
        "two",
    ),
    Seeded("son", "My son Mateo plays the violin.", "what instrument does Mateo play?", "violin"),
    Seeded(
        "grafana",
        "Dashboards are kept in Grafana under the team folder Platform.",
        "where are dashboards kept?",
        "Grafana",
    ),
    Seeded(
        "k8s",
        "Production runs on Kubernetes 1.30 in eu-west-1.",
        "which region does production run in?",
        "eu-west-1",
    ),
    Seeded(
        "lang",
        "I study Japanese at the weekend.",
        "which language does the user study?",
        "Japanese",
    ),
]

CHANGES = [
    Seeded(
        "sister",
        "My sister Priya moved to York last month and lives there now.",
        "where does Priya live?",
        "York",
    ),
    Seeded(
        "editor",
        "My code editor is Helix now, not Neovim.",
        "which editor does the user use?",
        "Helix",
    ),
    Seeded(
        "standup",
        "Our team standup moved to 10:00 every weekday.",
        "when is the team standup?",
        "10:00",
    ),
    Seeded(
        "oncall",
        "Amara is on call for the search cluster now, not Kenji.",
        "who is on call for the search cluster?",
        "Amara",
    ),
]

CHAT = [
    "Good morning!",
    "Thanks, that helps a lot.",
    "Can you explain how the cache invalidation works?",
    "What does this stack trace mean?",
    "Hmm, let me think about it.",
    "Could you rename that variable to something clearer?",
    "Why is the build slow today?",
    "That looks right to me.",
    "Nice, that fixed it.",
    "What is the difference between a mutex and a semaphore?",
    "Show me the diff.",
    "OK, let's move on.",
]


def turns() -> list[tuple[int, str]]:
    """The 200 user turns as (session number, text): facts first spread over the first six
    sessions, changes in the last four, chit-chat between."""
    total = SESSIONS * TURNS_PER_SESSION
    slots: dict[int, str] = {}
    first = 6 * TURNS_PER_SESSION
    for i, fact in enumerate(FACTS):
        slots[i * first // len(FACTS)] = fact.text
    for i, change in enumerate(CHANGES):
        slots[first + 5 + i * (total - first - 10) // len(CHANGES)] = change.text
    out = []
    for n in range(total):
        text = slots.get(n) or CHAT[n % len(CHAT)]
        out.append((n // TURNS_PER_SESSION, text))
    return out


def still_true() -> list[Seeded]:
    """What the script leaves true: each seeded fact, or the change that replaced it."""
    changed = {c.key: c for c in CHANGES}
    return [changed.get(f.key, f) for f in FACTS]


__all__ = [
    "CHANGES",
    "CHAT",
    "FACTS",
    "SESSIONS",
    "TURNS_PER_SESSION",
    "Seeded",
    "still_true",
    "turns",
]
