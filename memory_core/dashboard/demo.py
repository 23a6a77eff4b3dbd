"""A sample conversation written for this project, to fill a fresh workspace for a demo."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_core.views.scoped import ScopedMemory

DEMO_CONVERSATIONS: list[tuple[str, list[dict[str, str]]]] = [
    ("demo-onboarding", [
        {"role": "user", "content": "Hi! My name is Priya. I work at Northwind as a backend engineer."},
        {"role": "assistant", "content": "Nice to meet you, Priya. What are you working on at Northwind?"},
        {"role": "user", "content": "I'm migrating our billing service from Flask to FastAPI. I prefer type-checked Python and I always run mypy in CI."},
        {"role": "assistant", "content": "That migration is a good fit for FastAPI. Do you want help with the routing layer?"},
        {"role": "user", "content": "Yes, later. I usually review pull requests in the morning, so async answers suit me."},
        {"role": "assistant", "content": "Noted: asynchronous, written answers work best for you."},
        {"role": "user", "content": "Exactly."},
    ]),
    ("demo-weekend", [
        {"role": "user", "content": "I live in Lisbon and I love surfing at Carcavelos on weekends."},
        {"role": "assistant", "content": "Lisbon has great surf close by. Any goals for this season?"},
        {"role": "user", "content": "I want to run the Lisbon half marathon in March. I don't like running in the heat, so I train at 7am."},
        {"role": "assistant", "content": "An early schedule makes sense. I can draft a 12-week plan."},
        {"role": "user", "content": "Actually, I live in Porto now, I moved last month."},
        {"role": "assistant", "content": "Thanks for the correction: Porto it is."},
    ]),
]


def load_demo(view: "ScopedMemory") -> dict[str, int]:
    """Feed the demo conversations into the view's scope through the normal paths: extraction, context tier, daily
    log, dream."""
    added = 0
    for thread_id, messages in DEMO_CONVERSATIONS:
        result = view.update(messages, thread_id=thread_id)
        added += len(result.added)
        session = view.context(thread_id)
        for m in messages:
            session.add(m["role"], m["content"])
        session.end()
    view.wait_for_flushes()
    days = view.daily.days()
    if days:  # an earlier day's note, so that the dream reads two days of logs
        yesterday = datetime.combine(days[-1] - timedelta(days=1), time(18, 0), tzinfo=view.settings.tz)
        view.daily.append("- User asked for a FastAPI routing example for the billing service.",
                          title="Trimmed Context", when=yesterday)
    view.set_summaries({"workContext": "Backend engineer at Northwind migrating billing from Flask to FastAPI.",
                        "topOfMind": "Training for the Lisbon half marathon in March."})
    dream = view.deep_dream(2)
    return {"facts": added, "dream": 1 if dream.status == "updated" else 0}


# About fifty varied facts for Context Preview: categories, confidences and lengths that make trimming visible
# (a long note that a small budget passes over, corrections, near-ties), and summaries that do not repeat them.
PREVIEW_FACTS: list[tuple[str, str, float]] = [
    ("User's name is Priya", "context", 0.98),
    ("User works at Northwind as a backend engineer", "context", 0.97),
    ("User lives in Porto", "context", 0.95),
    ("User prefers type-checked Python and runs mypy in CI", "preference", 0.94),
    ("User is allergic to peanuts", "context", 0.93),
    ("User reviews pull requests in the morning", "behavior", 0.91),
    ("User prefers asynchronous, written answers", "preference", 0.9),
    ("User is migrating the billing service from Flask to FastAPI", "goal", 0.9),
    ("User runs the Porto half marathon in March", "goal", 0.88),
    ("User trains at 7am because of the heat", "behavior", 0.86),
    ("User surfs at Matosinhos on weekends", "preference", 0.85),
    ("User's manager is Tomas", "context", 0.84),
    ("User's team uses PostgreSQL 16 and Redis", "knowledge", 0.83),
    ("User deploys with GitHub Actions and Terraform", "knowledge", 0.82),
    ("User dislikes long meetings", "preference", 0.8),
    ("User speaks Portuguese, English and Hindi", "context", 0.8),
    ("User is learning the cello", "goal", 0.78),
    ("User's sister Marta lives in Lisbon", "context", 0.77),
    ("User drinks green tea, never coffee after noon", "preference", 0.76),
    ("User uses Neovim with the LazyVim setup", "preference", 0.75),
    ("User wants to give a talk at PyCon Portugal", "goal", 0.74),
    ("User's cat is called Miso", "context", 0.72),
    ("User writes tests before fixing a bug", "behavior", 0.72),
    ("User keeps a reading list of distributed-systems papers", "knowledge", 0.7),
    ("User cooks vegetarian food on weekdays", "behavior", 0.69),
    ("User prefers metric units", "preference", 0.68),
    ("User's on-call week is the first of each month", "context", 0.67),
    ("User likes concise code review comments with examples", "preference", 0.66),
    ("User reads Portuguese and English news", "behavior", 0.64),
    ("User plans a trip to Kyoto in October", "goal", 0.63),
    ("User volunteers at a coding club for teenagers", "context", 0.62),
    ("User backs up photos to an external disk every Sunday", "behavior", 0.6),
    ("User prefers dark mode everywhere", "preference", 0.58),
    ("User knows Go but prefers Python for services", "knowledge", 0.57),
    ("User's laptop is a ThinkPad running Debian", "context", 0.55),
    ("User listens to jazz while coding", "preference", 0.54),
    ("User wants to learn Rust this year", "goal", 0.52),
    ("User's favourite book is The Left Hand of Darkness", "preference", 0.5),
    ("User once lived in Lisbon for three years", "context", 0.56),
    ("User plays padel on Wednesday evenings", "behavior", 0.55),
    ("User has a standing desk", "context", 0.54),
    ("User collects vinyl records of Fado singers", "preference", 0.53),
    ("User tried Kotlin once and did not enjoy it", "knowledge", 0.53),
    ("User prefers window seats on flights", "preference", 0.52),
    ("User's dentist appointment is every six months", "context", 0.51),
    ("User mentioned liking sourdough bread", "preference", 0.51),
    ("User sometimes forgets to hydrate during long coding sessions", "behavior", 0.5),
    ("Correction: the user's team is Payments, not Billing Ops", "correction", 0.92),
    ("User's standup is at 9:30 Lisbon time", "context", 0.81),
    ("User's billing service migration notes: the invoices module still uses the legacy ORM, the payment "
     "webhooks need idempotency keys, the tax rules differ per country and live in a spreadsheet that finance "
     "owns, the nightly reconciliation job takes forty minutes and must finish before six, the PDF renderer "
     "depends on a system font that is missing in the new image, and the rollout plan is one region at a time "
     "with a feature flag per customer segment, starting with internal accounts in the second week", "knowledge",
     0.96),
]
PREVIEW_SUMMARIES = {"workContext": "Backend engineer at Northwind, moving billing to FastAPI.",
                     "personalContext": "Lives in Porto with a cat; surfs and runs.",
                     "topOfMind": "The half marathon in March and the billing rollout."}


def load_preview_demo(view: "ScopedMemory") -> int:
    """Fill an empty scope with the Context Preview demo: about fifty facts and three short summaries."""
    added = 0
    for content, category, confidence in PREVIEW_FACTS:
        fact, _reason = view.facts.add_with_reason(content, category, confidence, source="demo")
        added += fact is not None
    view.set_summaries(PREVIEW_SUMMARIES)
    return added
