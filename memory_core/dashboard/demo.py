"""A sample conversation written for this project, to fill a fresh workspace for a demo."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_core.memory import Memory
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


def load_demo(memory: "Memory | ScopedMemory", *, user_id: str = "default",
              agent_name: str = "default") -> dict[str, int]:
    """Feed the demo conversations through the normal paths: extraction, context tier, daily log, dream. `memory`
    is a Memory (then `user_id`/`agent_name` name the scope) or a scoped view (its own scope)."""
    from memory_core.views.scoped import ScopedMemory

    view = memory if isinstance(memory, ScopedMemory) else memory.scoped(user_id=user_id, agent_name=agent_name)
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
