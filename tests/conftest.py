"""Shared fixtures: real SQLite files, a real PostgreSQL schema per test, scripted LLMs."""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from typing import Iterator

import pytest
from sqlalchemy import create_engine, text

from memory_core import ManualClock, Memory, ScriptedChatModel, Settings
from memory_core.search.embedders import HashingEmbedder

PG_URL = os.environ.get("MEMORY_CORE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@contextmanager
def fresh_schema(prefix: str = "t") -> Iterator[str]:
    """The URL of a new, empty schema on the local PostgreSQL server, dropped afterwards; unreachable: an error."""
    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    engine = create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


@pytest.fixture
def pg_url():
    """A fresh schema on the local PostgreSQL server; the tests fail (never skip) if it is unreachable."""
    with fresh_schema() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def clock():
    return ManualClock()


def make_memory(tmp_path, database_url=None, **kwargs):
    llm = kwargs.pop("llm", None)
    clock = kwargs.pop("clock", None)
    embedder = kwargs.pop("embedder", HashingEmbedder())
    settings = Settings(home=tmp_path / "home", database_url=database_url, timezone=kwargs.pop("timezone", "UTC"),
                        llm_api_key=None, llm_base_url=None, **kwargs)
    return Memory(settings, llm=llm, embedder=embedder, clock=clock)


@pytest.fixture
def memory(tmp_path, database_url):
    m = make_memory(tmp_path, database_url)
    yield m
    m.close()


@pytest.fixture
def sqlite_memory(tmp_path):
    m = make_memory(tmp_path)
    yield m
    m.close()


@pytest.fixture
def scripted():
    return ScriptedChatModel()


@pytest.fixture(autouse=True)
def _fresh_response_formats():
    """What a process learnt about an LLM server's response formats stays in its test (the local test
    servers share one URL)."""
    from memory_core.llm.formats import forget_response_formats

    forget_response_formats()
    yield
    forget_response_formats()


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
