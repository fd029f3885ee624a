"""Synthetic but realistic memories and questions for benchmarks (pure).

Sentences are filled from templates by a seeded RNG, so a run is repeatable
and the text is varied like an agent's working memory: people, places,
projects, tools, times and preferences, 8 to 25 words each.
"""

from __future__ import annotations

import random

PEOPLE = [
    "Alice",
    "Bob",
    "Carol",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ingrid",
    "Jamal",
    "Keiko",
    "Luca",
    "Maya",
    "Noor",
    "Oscar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Victor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zara",
]
PLACES = [
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Denver",
    "Oslo",
    "Lima",
    "Hanoi",
    "Porto",
    "Seattle",
    "Krakow",
    "Quito",
    "Tbilisi",
    "Austin",
    "Marseille",
    "Bergen",
    "Cusco",
    "Dublin",
    "Halifax",
    "Leipzig",
    "Mombasa",
]
PROJECTS = [
    "billing service",
    "search rewrite",
    "mobile app",
    "data pipeline",
    "onboarding flow",
    "payment gateway",
    "analytics dashboard",
    "recommendation engine",
    "support portal",
    "inventory sync",
    "release tooling",
    "auth migration",
    "pricing page",
    "chat widget",
]
TOOLS = [
    "PostgreSQL",
    "Redis",
    "Kafka",
    "Terraform",
    "Kubernetes",
    "React",
    "Django",
    "FastAPI",
    "Rust",
    "Go",
    "Docker",
    "Grafana",
    "Airflow",
    "Spark",
    "SQLite",
    "Nginx",
    "Celery",
    "GraphQL",
    "Svelte",
    "Elixir",
]
FOODS = [
    "ramen",
    "sourdough bread",
    "green curry",
    "espresso",
    "oat milk",
    "dark chocolate",
    "falafel",
    "miso soup",
    "lemon tart",
    "black tea",
    "pho",
    "tacos al pastor",
    "goat cheese",
    "mango lassi",
]
HOBBIES = [
    "bouldering",
    "cello",
    "long-distance running",
    "woodworking",
    "birdwatching",
    "chess",
    "sailing",
    "pottery",
    "film photography",
    "salsa dancing",
    "gardening",
    "trail cycling",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIMES = ["early morning", "late morning", "noon", "early afternoon", "late afternoon", "evening"]
ADJECTIVES = [
    "flaky",
    "slow",
    "noisy",
    "urgent",
    "tricky",
    "stable",
    "fragile",
    "expensive",
    "outdated",
    "risky",
    "fast",
    "confusing",
    "elegant",
    "brittle",
]
ISSUES = [
    "memory leak",
    "timeout on large uploads",
    "race condition in the scheduler",
    "broken CSV export",
    "slow dashboard queries",
    "flaky integration tests",
    "login loop on Safari",
    "duplicate invoice emails",
    "stale cache after deploys",
    "missing translations in the settings page",
]

TEMPLATES = (
    "{person} prefers {food} over anything else when working late on the {project}.",
    "The {project} has a {issue} that {person} wants fixed before {day}.",
    "{person} moved to {place} last spring and now works remotely on the {project}.",
    "Remember that {person} is allergic to {food}, so skip it at the team dinner in {place}.",
    "We decided to use {tool} for the {project} because the old setup was {adj}.",
    "{person} spends most weekends on {hobby} and is training for an event in {place}.",
    "The standup moved to {day} {time} because {person} teaches {hobby} classes otherwise.",
    "{person} said the {tool} cluster feels {adj} and asked for a review of the {project}.",
    "Book a table in {place} for {person}, who loves {food} and hates loud rooms.",
    "The {issue} in the {project} came back after the {tool} upgrade on {day}.",
    "{person} recommends reading the {tool} docs before touching the {project} config.",
    "Next sprint, {person} and {person2} pair on migrating the {project} to {tool}.",
    "User mentioned that their sister {person} lives in {place} and visits every {day}.",
    "The deploy of the {project} is blocked until {person} signs off on the {tool} change.",
    "{person} thinks the {project} roadmap is {adj} and wants fewer features next quarter.",
    "Coffee chat with {person} on {day} {time}: talked about {hobby}, {place} and {food}.",
    "Keep the {tool} version pinned; the last upgrade made the {project} {adj} for a week.",
    "{person} asked me to remind them about the {issue} when we next discuss the {project}.",
    "The user likes concise answers, drinks {food} every {time} and lives near {place}.",
    "{person} gave a talk in {place} about {tool} and how it fixed our {issue}.",
    "{person} usually takes {food} with breakfast on {day} mornings.",
    "Ask {person} about {hobby} next time we meet.",
    "From the {day} retro: {person} felt the {project} was {adj}, {person2} blamed "
    "the {issue}, and we will revisit {tool}.",
)

QUESTIONS = (
    "What does {person} like to eat when working on the {project}?",
    "Where does {person} live now, still in {place}?",
    "Which tool did we choose for the {project} instead of {tool}?",
    "what was wrong with the {project} last {day}",
    "who is working on the {project} migration with {person}",
    "Any known problems with {tool} in the {project}?",
    "When is the standup now that {person} teaches {hobby}?",
    "What are {person}'s hobbies besides {hobby}?",
    "is anyone allergic to {food} at the {place} dinner",
    "Which bug in the {project} keeps coming back after {tool} upgrades?",
    "who lives in {place} and likes {food}",
    "How should I format answers for the user who lives near {place}?",
    "what did {person} say about {tool}",
    "remind me what to bring up with {person} about the {issue}",
    "restaurant preferences of {person} for a dinner in {place}",
)


def _fill(template: str, rng: random.Random) -> str:
    person, person2 = rng.sample(PEOPLE, 2)
    return template.format(
        person=person,
        person2=person2,
        place=rng.choice(PLACES),
        project=rng.choice(PROJECTS),
        tool=rng.choice(TOOLS),
        food=rng.choice(FOODS),
        hobby=rng.choice(HOBBIES),
        day=rng.choice(DAYS),
        time=rng.choice(TIMES),
        adj=rng.choice(ADJECTIVES),
        issue=rng.choice(ISSUES),
    )


def memories(rng: random.Random, n: int) -> list[str]:
    """``n`` varied memory sentences."""
    return [_fill(rng.choice(TEMPLATES), rng) for _ in range(n)]


def questions(rng: random.Random, n: int) -> list[str]:
    """``n`` varied natural-language questions about such memories."""
    return [_fill(rng.choice(QUESTIONS), rng) for _ in range(n)]
