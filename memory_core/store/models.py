"""The tables, as SQLModel classes. Schema changes go through `migrations.py`."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, Index, LargeBinary, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def _ts() -> Column:
    return Column(DateTime(timezone=True), nullable=False)


class FactRow(SQLModel, table=True):
    __tablename__ = "facts"
    __table_args__ = (
        UniqueConstraint("user_id", "agent_name", "content_key", name="uq_facts_scope_content"),
        Index("ix_facts_scope_confidence", "user_id", "agent_name", "confidence"),
    )
    pk: int | None = Field(default=None, primary_key=True)
    id: str = Field(max_length=16, unique=True, index=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    content: str = Field(sa_column=Column(Text, nullable=False))
    # The dedup key: sha256 of the normalised content (see facts.content_key), unique per scope among valid
    # facts. An invalid fact's key is "invalid:<id>", so that it never blocks the same text from coming back.
    content_key: str = Field(max_length=64)
    category: str = Field(max_length=16)
    confidence: float
    created_at: datetime = Field(sa_column=_ts())
    updated_at: datetime = Field(sa_column=_ts())
    source: str | None = Field(default=None, max_length=256)
    thread_id: str | None = Field(default=None, max_length=256)
    # Validity (m007): NULL valid_from reads as created_at; invalid_at NULL means valid now.
    valid_from: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    invalid_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    superseded_by: str | None = Field(default=None, max_length=16)
    invalid_reason: str | None = Field(default=None, sa_column=Column(Text))
    # m012: what a correction corrects (DeerFlow's sourceError), kept beside the content, not inside it.
    source_error: str | None = Field(default=None, sa_column=Column(Text))
    # m020: when a statement that instructs the agent was held for review (it is also invalid from then, so that
    # nothing an agent reads sees it); NULL once a person releases it, and for every other fact.
    held_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class FactAuditRow(SQLModel, table=True):
    __tablename__ = "fact_audit"
    __table_args__ = (Index("ix_fact_audit_scope", "user_id", "agent_name", "at"),)
    pk: int | None = Field(default=None, primary_key=True)
    fact_id: str = Field(max_length=16, index=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    # added, updated, deleted, evicted, removed, invalidated, superseded, merged, held, released
    action: str = Field(max_length=16)
    old: str | None = Field(default=None, sa_column=Column(Text))  # JSON
    new: str | None = Field(default=None, sa_column=Column(Text))  # JSON
    reason: str | None = Field(default=None, sa_column=Column(Text))
    at: datetime = Field(sa_column=_ts())
    actor: str | None = Field(default=None, max_length=256)  # m007: who made the change (None: not said)


class SummaryRow(SQLModel, table=True):
    __tablename__ = "scope_summaries"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    section: str = Field(max_length=32, primary_key=True)
    summary: str = Field(sa_column=Column(Text, nullable=False))
    version: int = 1
    updated_at: datetime = Field(sa_column=_ts())


class DocumentRow(SQLModel, table=True):
    """Markdown documents when they live in the database (PostgreSQL, or by setting)."""

    __tablename__ = "documents"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    path: str = Field(max_length=256, primary_key=True)
    content: str = Field(sa_column=Column(Text, nullable=False))
    updated_at: datetime = Field(sa_column=_ts())


class CoreVersionRow(SQLModel, table=True):
    """Every version of MEMORY.md ever written, so users can diff and roll back."""

    __tablename__ = "core_versions"
    __table_args__ = (UniqueConstraint("user_id", "agent_name", "version", name="uq_core_version"),)
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    version: int
    content: str = Field(sa_column=Column(Text, nullable=False))
    reason: str = Field(max_length=256)
    created_at: datetime = Field(sa_column=_ts())
    actor: str | None = Field(default=None, max_length=256)  # m007


class DreamStateRow(SQLModel, table=True):
    __tablename__ = "dream_state"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    last_hash: str | None = Field(default=None, max_length=64)
    consolidated_through: str | None = Field(default=None, max_length=10)  # YYYY-MM-DD
    last_status: str | None = Field(default=None, max_length=32)
    last_reason: str | None = Field(default=None, sa_column=Column(Text))
    last_run_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class DreamtDayRow(SQLModel, table=True):
    """A daily log a dream has read, with the hash of its text then: retention removes only logs read as they
    are now (a log imported for an old day, or appended to since, is kept until a dream reads it)."""

    __tablename__ = "dreamt_days"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    day: str = Field(max_length=10, primary_key=True)  # YYYY-MM-DD
    content_hash: str = Field(max_length=64)
    dreamt_at: datetime = Field(sa_column=_ts())


class DreamRunRow(SQLModel, table=True):
    __tablename__ = "dream_runs"
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64, index=True)
    agent_name: str = Field(max_length=64)
    status: str = Field(max_length=32)
    reason: str | None = Field(default=None, sa_column=Column(Text))
    input_tokens: int = 0
    output_tokens: int = 0
    at: datetime = Field(sa_column=_ts())


class DreamProposalRow(SQLModel, table=True):
    """A Deep Dream's MEMORY.md waiting for a person (Settings.dream_review), with what it was made against."""

    __tablename__ = "dream_proposals"
    id: str = Field(max_length=16, primary_key=True)
    user_id: str = Field(max_length=64, index=True)
    agent_name: str = Field(max_length=64)
    created_at: datetime = Field(sa_column=_ts())
    base_hash: str = Field(max_length=64)  # sha256 of MEMORY.md when the dream read it ("" for none)
    text: str = Field(sa_column=Column(Text, nullable=False))
    notes: str = Field(sa_column=Column(Text, nullable=False))  # JSON: narrative, removed, left_out, read days
    status: str = Field(max_length=16)  # open, approved, rejected, stale
    decided_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True))
    decided_by: str | None = Field(default=None, max_length=256)


class UsageRow(SQLModel, table=True):
    """One call to an LLM or embedding API: who, for what, how many tokens, what it cost."""

    __tablename__ = "usage"
    pk: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(sa_column=_ts())
    day: str = Field(max_length=10)  # YYYY-MM-DD in Settings.timezone: what a daily budget counts
    user_id: str | None = Field(default=None, max_length=64)
    agent_name: str | None = Field(default=None, max_length=64)
    operation: str = Field(max_length=32)
    model: str = Field(max_length=128)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    actor: str | None = Field(default=None, max_length=256)


class BudgetReservationRow(SQLModel, table=True):
    """Tokens an LLM call in flight holds against its scope's daily budget: taken before the call, replaced by
    its usage row after it (policy/usage.py)."""

    __tablename__ = "budget_reservations"
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    day: str = Field(max_length=10)
    tokens: int = 0
    at: datetime = Field(sa_column=_ts())


class InjectionRow(SQLModel, table=True):
    """What an agent asked to have injected: who, when, the query, the tokens and the facts that went in."""

    __tablename__ = "injections"
    pk: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(sa_column=_ts())
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    actor: str | None = Field(default=None, max_length=256)
    query: str | None = Field(default=None, sa_column=Column(Text))
    tokens: int = 0
    max_tokens: int = 0
    fact_ids: str = Field(sa_column=Column(Text, nullable=False))  # JSON list


class PendingUpdateRow(SQLModel, table=True):
    """The persisted update queue: one row per (thread, user, agent) key."""

    __tablename__ = "pending_updates"
    __table_args__ = (
        UniqueConstraint("thread_id", "user_id", "agent_name", name="uq_pending_key"),
        Index("ix_pending_status_due", "status", "due_at"),
    )
    pk: int | None = Field(default=None, primary_key=True)
    thread_id: str = Field(max_length=256)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    messages: str = Field(sa_column=Column(Text, nullable=False))  # JSON
    status: str = Field(max_length=16)  # pending, in_flight, failed
    generation: int = 1
    attempts: int = 0
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    due_at: datetime = Field(sa_column=_ts())
    enqueued_at: datetime = Field(sa_column=_ts())
    claimed_by: str | None = Field(default=None, max_length=128)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    actor: str | None = Field(default=None, max_length=256)  # m007: who queued it; the worker applies as them
    options: str | None = Field(default=None, sa_column=Column(Text))  # m007: JSON, e.g. {"when": iso} for imports


class LeaseRow(SQLModel, table=True):
    """A named, expiring lock shared by every process on the database (dream slots)."""

    __tablename__ = "leases"
    name: str = Field(max_length=256, primary_key=True)
    holder: str = Field(max_length=128)
    expires_at: datetime = Field(sa_column=_ts())


class PlanRow(SQLModel, table=True):
    __tablename__ = "plans"
    __table_args__ = (Index("ix_plans_scope_status", "user_id", "agent_name", "status"),)
    id: str = Field(max_length=16, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    name: str = Field(sa_column=Column(Text, nullable=False))
    steps: str = Field(sa_column=Column(Text, nullable=False))  # JSON
    session_ids: str = Field(sa_column=Column(Text, nullable=False))  # JSON
    status: str = Field(max_length=16)
    version: int = 1
    created_at: datetime = Field(sa_column=_ts())
    updated_at: datetime = Field(sa_column=_ts())


class ChunkRow(SQLModel, table=True):
    """Searchable pieces of daily logs and MEMORY.md, with their line ranges."""

    __tablename__ = "chunks"
    __table_args__ = (Index("ix_chunks_doc", "user_id", "agent_name", "path"),)
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    kind: str = Field(max_length=8)  # daily, core
    path: str = Field(max_length=256)
    start_line: int
    end_line: int
    text: str = Field(sa_column=Column(Text, nullable=False))
    day: str | None = Field(default=None, max_length=10)


class IndexedDocRow(SQLModel, table=True):
    """The content hash of each document as last indexed, to re-chunk only what changed."""

    __tablename__ = "indexed_docs"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    path: str = Field(max_length=256, primary_key=True)
    content_hash: str = Field(max_length=64)


class EmbeddingRow(SQLModel, table=True):
    __tablename__ = "embeddings"
    __table_args__ = (Index("ix_embeddings_scope_model", "user_id", "agent_name", "model"),)
    owner: str = Field(max_length=32, primary_key=True)  # "f:<fact id>" or "c:<chunk pk>"
    model: str = Field(max_length=128, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    dim: int
    text_hash: str = Field(max_length=64)
    vector: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class TokenStatsRow(SQLModel, table=True):
    """How many of a scope's items hold each token of an embedder's vocabulary, at one moment: the inverse
    document frequencies that token-weighted embedders pool with. `version` changes with every snapshot."""

    __tablename__ = "token_stats"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    model: str = Field(max_length=128, primary_key=True)
    items: int
    version: str = Field(max_length=64)
    df: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # int32, one per vocabulary entry


class GrantRow(SQLModel, table=True):
    """A role given to an e-mail address or a whole domain ("@acme.com") on a scope pattern ("ana/*")."""

    __tablename__ = "access_grants"
    __table_args__ = (UniqueConstraint("subject", "scope", name="uq_grant_subject_scope"),)
    pk: int | None = Field(default=None, primary_key=True)
    id: str = Field(max_length=16, unique=True)
    subject: str = Field(max_length=320)
    role: str = Field(max_length=16)
    scope: str = Field(max_length=160)
    created_at: datetime = Field(sa_column=_ts())
    created_by: str | None = Field(default=None, max_length=256)


class ApiTokenRow(SQLModel, table=True):
    """An agent's API token: bound to one scope and one role; only the secret's hash is stored."""

    __tablename__ = "api_tokens"
    pk: int | None = Field(default=None, primary_key=True)
    id: str = Field(max_length=16, unique=True)
    name: str = Field(max_length=64)
    secret_hash: str = Field(max_length=64, unique=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    role: str = Field(max_length=16)
    created_at: datetime = Field(sa_column=_ts())
    expires_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    last_used_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    revoked: bool = False
    created_by: str | None = Field(default=None, max_length=256)


class AccessAuditRow(SQLModel, table=True):
    """Who changed access: grants, revocations, tokens, the worker's switches, sandboxes."""

    __tablename__ = "access_audit"
    pk: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(sa_column=_ts())
    actor: str | None = Field(default=None, max_length=256)
    action: str = Field(max_length=32)
    detail: str = Field(sa_column=Column(Text, nullable=False))


class SandboxRow(SQLModel, table=True):
    """A scope of its own for one anonymous browser session on a public host; removed once expired."""

    __tablename__ = "sandboxes"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    key_hash: str = Field(max_length=64, unique=True)  # the visitor's key (kept in their page's URL), hashed
    created_at: datetime = Field(sa_column=_ts())
    expires_at: datetime = Field(sa_column=_ts())


class RestoreJournalRow(SQLModel, table=True):
    """A document a bundle import still has to write: put in the same transaction as the bundle's rows and
    removed once the document is written, so that an import killed in between is finished on the next open."""

    __tablename__ = "restore_journal"
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    path: str = Field(max_length=256)
    content: str = Field(sa_column=Column(Text, nullable=False))
    before_hash: str | None = Field(default=None, max_length=64)  # the document's text before the import
    created_at: datetime = Field(sa_column=_ts())


class ImportedItemRow(SQLModel, table=True):
    """What an import has already brought into a scope (a conversation of an export, say), so that importing
    the same file again adds nothing, and a big import interrupted half-way resumes where it stopped."""

    __tablename__ = "imported_items"
    user_id: str = Field(max_length=64, primary_key=True)
    agent_name: str = Field(max_length=64, primary_key=True)
    source_key: str = Field(max_length=300, primary_key=True)  # "<format>:<id in the export>"
    content_hash: str = Field(max_length=64)
    imported_at: datetime = Field(sa_column=_ts())


class AgentItemRow(SQLModel, table=True):
    """An agent framework's key-value item (LangGraph's store): see store/item_store.py."""

    __tablename__ = "agent_items"
    __table_args__ = (
        UniqueConstraint("user_id", "agent_name", "path", "item_key", name="uq_agent_items_key"),
        Index("ix_agent_items_fact", "fact_id"),
    )
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    path: str = Field(sa_column=Column(Text, nullable=False))
    item_key: str = Field(sa_column=Column(Text, nullable=False))
    value: str = Field(sa_column=Column(Text, nullable=False))  # JSON
    fact_id: str | None = Field(default=None, max_length=16)
    created_at: datetime = Field(sa_column=_ts())
    updated_at: datetime = Field(sa_column=_ts())


class OAuthClientRow(SQLModel, table=True):
    """An MCP client registered with the server's OAuth authorization server (RFC 7591), as JSON."""

    __tablename__ = "oauth_clients"
    client_id: str = Field(max_length=64, primary_key=True)
    info: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=_ts())
    used_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))  # first tokens


class OAuthTokenRow(SQLModel, table=True):
    """A sign-in in progress, an authorization code, an access or a refresh token of MCP's OAuth: only
    the secret's hash is stored; `family` ties the tokens of one sign-in together (revoked together)."""

    __tablename__ = "oauth_tokens"
    token_hash: str = Field(max_length=64, primary_key=True)
    kind: str = Field(max_length=16)
    family: str = Field(max_length=64, index=True)
    client_id: str = Field(max_length=64)
    email: str | None = Field(default=None, max_length=320)
    data: str = Field(sa_column=Column(Text, nullable=False))  # JSON
    expires_at: datetime = Field(sa_column=_ts())
    created_at: datetime = Field(sa_column=_ts())
class LLMFormatRow(SQLModel, table=True):
    """The response format an LLM server (base URL and model) takes, as found by trying (llm/formats.py)."""

    __tablename__ = "llm_formats"
    base_url: str = Field(max_length=500, primary_key=True)  # scheme, host, port, path: no credentials
    model: str = Field(max_length=200, primary_key=True)
    mode: str = Field(max_length=16)
    decided_at: datetime = Field(sa_column=_ts())


class ProvenanceRow(SQLModel, table=True):
    """What memory_core wrote one summary sentence or MEMORY.md bullet from: a fact, or a daily log's day (m019).
    A sentence written from several facts has a row for each; see store/provenance_store.py."""

    __tablename__ = "provenance"
    __table_args__ = (
        Index("ix_provenance_place", "user_id", "agent_name", "place", "text_key"),
        Index("ix_provenance_fact", "fact_id"),
    )
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    place: str = Field(max_length=64)  # "summary:<section>", or "core" for MEMORY.md
    text_key: str = Field(max_length=64)  # truth.sentence_key of the sentence or bullet
    fact_id: str | None = Field(default=None, max_length=16)
    source: str | None = Field(default=None, max_length=64)  # "log:YYYY-MM-DD": the daily log a dream read it in
    created_at: datetime = Field(sa_column=_ts())


class EraseJournalRow(SQLModel, table=True):
    """An erase under way (m024): the facts and the keys of the passages its plan found (hashes, never text),
    written before anything changes and removed once every place is rewritten; one left over is finished on the
    next open. See store/tombstone_store.py."""

    __tablename__ = "erase_journal"
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    fact_ids: str = Field(sa_column=Column(Text, nullable=False))  # JSON list
    passage_keys: str = Field(sa_column=Column(Text, nullable=False))  # JSON list of erase_match.passage_key
    reason: str | None = Field(default=None, sa_column=Column(Text))
    actor: str | None = Field(default=None, max_length=256)
    created_at: datetime = Field(sa_column=_ts())


class EraseTombstoneRow(SQLModel, table=True):
    """What an erase leaves (m024): keyed hashes of the statement (its normalised text, and its marks), never the
    text, and when; what was taken in before that time cannot bring the statement back."""

    __tablename__ = "erase_tombstones"
    __table_args__ = (Index("ix_erase_tombstones_scope", "user_id", "agent_name", "erased_at"),)
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    statement_key: str = Field(max_length=64)  # HMAC of facts.api.normalise_for_key(content)
    marks: str = Field(sa_column=Column(Text, nullable=False))  # JSON erase_match.Marks, each root an HMAC
    erased_at: datetime = Field(sa_column=_ts())


class EraseSecretRow(SQLModel, table=True):
    """The database's own key for the tombstones' keyed hashes (m024), made on first need."""

    __tablename__ = "erase_secret"
    name: str = Field(max_length=32, primary_key=True)
    secret: str = Field(max_length=128)


class EpisodeTurnRow(SQLModel, table=True):
    """One turn of a conversation taken in (m028): who said it, when, and the dates its relative expressions
    mean. The turns are searched through their copies in `chunks` (kind "episode", path "episodes/<episode id>",
    line = turn index); see store/episode_store.py."""

    __tablename__ = "episode_turns"
    __table_args__ = (
        Index("ix_episode_turns_episode", "user_id", "agent_name", "episode_id", "turn_index"),
        Index("ix_episode_turns_day", "user_id", "agent_name", "day"),
        Index("ix_episode_turns_thread", "user_id", "agent_name", "thread_id", "pk"),
    )
    pk: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(max_length=64)
    agent_name: str = Field(max_length=64)
    episode_id: str = Field(max_length=40)  # "YYYY-MM-DD-<hex>": the day it was said, then a random part
    thread_id: str = Field(max_length=256)
    turn_index: int
    role: str = Field(max_length=16)
    speaker: str | None = Field(default=None, max_length=64)  # a message's "name", when it has one
    text: str = Field(sa_column=Column(Text, nullable=False))  # masked like every text taken in
    dates: str = Field(sa_column=Column(Text, nullable=False))  # JSON [[expression, start, end, value], ...]
    said_at: datetime = Field(sa_column=_ts())
    day: str = Field(max_length=10)  # said_at's day, YYYY-MM-DD
