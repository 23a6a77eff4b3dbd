"""ScopedMemory.data_version(): the dashboard's cache key changes with every change of a fact or a summary, of a
conversation, a daily log or MEMORY.md (the Context Preview's passages), and only of its own scope (SQLite and
PostgreSQL)."""

from __future__ import annotations


def test_data_version_follows_every_change(memory):
    view = memory.scoped()
    other = memory.scoped(user_id="ana")
    seen = [view.data_version()]
    assert view.data_version() == seen[0]  # nothing changed: the same key
    fact = view.facts.add("User drinks tea", "preference", 0.8)
    seen.append(view.data_version())
    view.facts.revise(fact.id, confidence=0.6)
    seen.append(view.data_version())
    new = view.facts.revise(fact.id, content="User drinks green tea").fact
    seen.append(view.data_version())
    view.set_summaries({"workContext": "Engineer at Acme"})
    seen.append(view.data_version())
    view.facts.delete(new.id)
    seen.append(view.data_version())
    assert len(set(seen)) == len(seen)
    before = view.data_version()
    other.facts.add("Ana keeps bees", "context", 0.9)
    assert view.data_version() == before  # another scope's change is not this scope's


def test_data_version_follows_conversations_logs_and_core_memory(memory):
    view = memory.scoped(user_id="ana", agent_name="bot")
    other = memory.scoped(user_id="bo", agent_name="bot")
    seen = [view.data_version()]
    view.update([{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}], thread_id="t1")
    seen.append(view.data_version())  # a conversation kept as an episode (no fact in it)
    view.daily.append("User: the kiln is booked for Friday.")
    seen.append(view.data_version())
    memory.write_core("# Memory\n\n- User makes pottery\n", user_id="ana", agent_name="bot")
    seen.append(view.data_version())
    assert len(set(seen)) == len(seen), seen
    before = view.data_version()
    other.update([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hey"}], thread_id="t2")
    other.daily.append("User: another scope's day.")
    assert view.data_version() == before
