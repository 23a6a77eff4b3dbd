"""The admin handle (what spans scopes) and the composition root that builds it with everything else."""

from __future__ import annotations

import pytest

from memory_core.composition import Composition, compose
from memory_core.scope import make_scope
from memory_core.settings import Settings
from memory_core.clock import SystemClock
from tests.conftest import make_memory


def test_memory_holds_what_compose_built_and_builds_nothing_after(sqlite_memory):
    m = sqlite_memory
    assert m.worker.queue is m.parts.queue and m.worker.dream is m.dream_schedule
    assert sorted(job.name for job in m.worker.registered) == ["dream", "embeddings", "retention", "sandboxes"]
    assert m.admin.db is m.parts.db and m.admin.access is m.parts.access
    assert not m.worker.running  # built, not started: no thread in __init__


def test_compose_alone_builds_a_memory_that_starts_works_and_closes(tmp_path):
    built = compose(Settings(home=tmp_path / "home", llm_api_key=None, llm_base_url=None),
                    clock=SystemClock(), start_on_enqueue=False)
    assert isinstance(built, Composition)
    view = built.view(make_scope("ana", "bot"))
    view.queue.add([{"role": "user", "content": "I live in Porto."}], thread_id="t")
    assert not built.worker.running  # start_on_enqueue=False: queuing left it to another process
    built.lifecycle.start()
    assert built.worker.running
    built.lifecycle.close()  # flushes the queue: the update ran through a view of its scope
    assert built.lifecycle.closed and not built.worker.running
    assert any("Porto" in f.content for f in built.parts.store.list(make_scope("ana", "bot")))
    with pytest.raises(RuntimeError, match="closed"):
        built.lifecycle.start()


def test_admin_lists_and_purges_scopes_and_memory_says_the_same(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        m.scoped(user_id="ana", agent_name="bot").facts.add("User likes tea", "preference", 0.9)
        m.scoped(user_id="bob", agent_name="bot").daily.append("Talked about boats")
        ana, bob = make_scope("ana", "bot"), make_scope("bob", "bot")
        assert {ana, bob} <= set(m.admin.scopes()) and m.admin.scopes() == m.scopes()
        assert m.admin.active_scopes() == m.active_scopes()
        assert m.admin.workspace(ana) == m.workspace(user_id="ana", agent_name="bot")
        assert m.admin.purge_scope(ana)["facts"] == 1
        assert m.scoped(user_id="ana", agent_name="bot").facts.list() == []
        assert m.scoped(user_id="bob", agent_name="bot").daily.read(m.admin.now().date()) is not None


def test_duplicate_of_names_the_fact_that_add_skipped_for(memory):
    ana = memory.scoped(user_id="ana", agent_name="bot")
    bob = memory.scoped(user_id="bob", agent_name="bot")
    tea = ana.facts.add("User likes tea", "preference", 0.9)
    bob.facts.add("User likes coffee", "preference", 0.9)
    fact, skipped = ana.facts.add_with_reason("  user   LIKES tea ", "preference", 0.9)
    assert fact is None and skipped == "duplicate"
    assert ana.facts.duplicate_of("  user   LIKES tea ").id == tea.id
    assert ana.facts.duplicate_of("User likes coffee") is None  # another scope's fact is not this scope's duplicate
    assert ana.facts.duplicate_of("User likes milk") is None


def test_a_views_queue_flush_processes_its_scope_only_and_needs_a_writer(tmp_path):
    with make_memory(tmp_path, debounce_seconds=3600) as m:  # the worker leaves them pending for an hour
        ana = m.scoped(user_id="ana", agent_name="bot", actor="cli:import")
        bob = m.scoped(user_id="bob", agent_name="bot")
        ana.queue.add([{"role": "user", "content": "I live in Porto."}], thread_id="a")
        bob.queue.add([{"role": "user", "content": "I live in Lisbon."}], thread_id="b")
        with pytest.raises(PermissionError):
            m.scoped(user_id="ana", agent_name="bot", role="viewer").queue.flush()
        assert ana.queue.flush() == 1
        assert ana.queue.pending() == 0 and bob.queue.pending() == 1
        assert any("Porto" in f.content for f in ana.facts.list()) and bob.facts.list() == []


def test_the_admin_handle_reports_and_switches_the_worker_that_memory_holds(sqlite_memory):
    from memory_core.policy.access import NOBODY, OPERATOR

    m, admin = sqlite_memory, sqlite_memory.admin
    assert admin.dreams_enabled and admin.next_dream() == m.worker.next_dream() is not None
    assert admin.status().running is False and admin.status().dream_enabled and m.status().pending == 0
    with pytest.raises(PermissionError):
        admin.set_dreams_enabled(False, principal=NOBODY)
    admin.set_dreams_enabled(False, principal=OPERATOR)
    assert not m.worker.dream_enabled and admin.next_dream() is None and not m.status().dream_enabled
    with admin.acting_as("dashboard:lead@acme.com"):
        admin.access.grant("ana@acme.com", "viewer", "ana/*")
    assert admin.access.grants()[0].created_by == "dashboard:lead@acme.com"
    assert admin.offline == m.offline is True
