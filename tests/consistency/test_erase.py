"""Erase: what must be gone leaves no trace of its text anywhere memory_core keeps it (the fact and its audit, the
summaries, every MEMORY.md version, daily logs, the search index, queued conversations, files); passages that
state it become [erased]. SQLite and PostgreSQL, files and database document stores."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, inspect, text

from memory_core.text.truth import erase_marks, erase_passages, proper_names
from tests.conftest import make_memory
from tests.consistency.test_propagation import GLOBEX, visible


def test_erase_passages_replaces_each_sentence_that_states_or_names_it():
    content = "User works at Globex as a data engineer"
    out, n = erase_passages("## Trimmed (10:00)\nI work at Globex as a data engineer. I like tea.\n- Globex is fun\n"
                            "- data is fun", erase_marks(content), proper_names(content))
    assert out == "## Trimmed (10:00)\n[erased] I like tea.\n- [erased]\n- data is fun" and n == 2
    assert proper_names("User moved to New York City in May") == {"new york city"}


def _db_texts(url: str) -> list[str]:
    """Every text value of every table of the database."""
    engine = create_engine(url)
    found: list[str] = []
    with engine.connect() as conn:
        for table in inspect(conn).get_table_names():
            if table.endswith(("_data", "_idx", "_docsize", "_config", "_content")):
                continue  # FTS5 shadow tables: covered by the file scan
            for row in conn.execute(text(f"SELECT * FROM {table}")):
                found += [str(v) for v in row if isinstance(v, (str, bytes))]
    engine.dispose()
    return found


@pytest.mark.parametrize("document_store", ["files", "database"])
def test_erase_leaves_no_trace(tmp_path, database_url, document_store):
    home = tmp_path / "home"
    with make_memory(tmp_path, database_url, document_store=document_store) as m:
        fact = m.update(GLOBEX, thread_id="t1").added[0]
        m.daily.append("User: I work at Globex as a data engineer. I like tea. Globex is hiring.")
        m.write_core("# Memory\n\n- User works at Globex as a data engineer\n- User likes tea\n")
        m.write_core("# Memory\n\n- User works at Globex as a data engineer\n- User likes tea\n- User hikes\n")
        m.queue.add([{"role": "user", "content": "I work at Globex as a data engineer. I like hiking."}],
                    thread_id="t9")
        session = m.context("s1")
        session.add("user", "Remember: I work at Globex as a data engineer.")
        m.search("Globex")  # indexed and embedded
        m.format_for_injection(query="where do I work at Globex as a data engineer")
        with m.acting_as("dashboard:ana@acme.com"):
            counts = m.facts.erase(fact.id, reason="asked by the user")
        assert counts["facts"] == 1 and counts["core_versions"] == 2 and counts["pending_updates"] == 1
        assert "data engineer" not in session.messages[0]["content"]
        assert "data engineer" not in visible(m)
        assert "User likes tea" in m.read_core()
        assert "Globex is hiring." in m.daily.read(m.daily.today())  # names the company, does not state the fact: kept
        erased = m.facts.history(fact.id)
        assert erased[0].action == "erased" and erased[0].actor == "dashboard:ana@acme.com"
        assert erased[0].reason == "asked by the user" and erased[0].old is None and erased[0].new is None
        assert all("Globex" not in json.dumps([e.old, e.new]) for e in erased)
        assert m.facts.get(fact.id).content == "[erased]" and not m.facts.get(fact.id).valid
        url = m.settings.database_url
        texts = _db_texts(url)
        assert not [t for t in texts if "data engineer" in t.lower()]
        assert any("[erased]" in t for t in texts)
        m.close(flush=False)
    leftovers = [p for p in home.rglob("*") if p.is_file() and b"data engineer" in p.read_bytes().lower()]
    assert leftovers == []


def test_erase_checks_its_arguments_and_roles(tmp_path):
    with make_memory(tmp_path) as m:
        with pytest.raises(KeyError):
            m.facts.erase("fact_00000000")
        other = m.facts.add("User likes tea", "preference", 0.9, user_id="bob")
        view = m.scoped(user_id="ana", agent_name="default")
        with pytest.raises(KeyError):
            view.facts.erase(other.id)
        mine = m.facts.add("User likes coffee", "preference", 0.9, user_id="ana")
        with pytest.raises(PermissionError):
            m.scoped(user_id="ana", agent_name="default", role="viewer").facts.erase(mine.id)
        assert view.facts.erase(mine.id)["facts"] == 1
