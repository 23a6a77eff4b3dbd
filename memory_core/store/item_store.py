"""Key-value items of agent frameworks (LangGraph's `BaseStore`), per scope, in SQL.

An item is (scope, path, key) -> a JSON value; `path` is the rest of the framework's namespace after the
scope, its labels joined by "." (LangGraph forbids "." inside a label, so the join is unambiguous). An item
that is a fact points at it (`fact_id`): the fact is the truth, the row keeps the key and the other fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select

from memory_core.clock import Clock, utc
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import AgentItemRow, FactRow


@dataclass(frozen=True)
class StoredItem:
    """A row, with what the database knows of its fact: whether it is valid now, and what replaced it."""

    scope: Scope
    path: str
    key: str
    value: str
    fact_id: str | None
    created_at: datetime
    updated_at: datetime
    fact_valid: bool = False
    fact_superseded_by: str | None = None


class ItemStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def get(self, scope: Scope, path: str, key: str) -> StoredItem | None:
        found = self._select(scope.user_id, scope.agent_name, path=path, key=key)
        return found[0] if found else None

    def items(self, user_id: str | None = None, agent_name: str | None = None) -> list[StoredItem]:
        """Every item (of one user, or one scope), most recently updated first."""
        return self._select(user_id, agent_name)

    def put(self, scope: Scope, path: str, key: str, value: str, fact_id: str | None) -> StoredItem:
        """Create or replace the item; created_at stays what it was."""
        now = self.clock.now()
        with self.db.write(lock=f"items:{scope.key}") as s:
            row = s.execute(self._where(select(AgentItemRow), scope.user_id, scope.agent_name, path, key)).scalars().first()
            if row is None:
                row = AgentItemRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path, item_key=key,
                                   value=value, fact_id=fact_id, created_at=now, updated_at=now)
            else:
                row.value, row.fact_id, row.updated_at = value, fact_id, now
            s.add(row)
            s.flush()
            return StoredItem(scope, path, key, value, fact_id, utc(row.created_at), now)

    def sharing(self, scope: Scope, fact_ids: set[str], path: str, key: str) -> int:
        """How many other items of the scope point at one of `fact_ids` (two keys may hold one statement)."""
        query = select(AgentItemRow.path, AgentItemRow.item_key).where(
            AgentItemRow.user_id == scope.user_id, AgentItemRow.agent_name == scope.agent_name,
            AgentItemRow.fact_id.in_(sorted(fact_ids)))
        with self.db.read() as s:
            return sum(1 for p, k in s.execute(query).all() if (p, k) != (path, key))

    def delete(self, scope: Scope, path: str, key: str) -> None:
        with self.db.write(lock=f"items:{scope.key}") as s:
            s.execute(self._where(delete(AgentItemRow), scope.user_id, scope.agent_name, path, key))

    @staticmethod
    def _where(statement, user_id: str | None, agent_name: str | None, path: str | None = None, key: str | None = None):
        for column, value in ((AgentItemRow.user_id, user_id), (AgentItemRow.agent_name, agent_name),
                              (AgentItemRow.path, path), (AgentItemRow.item_key, key)):
            if value is not None:
                statement = statement.where(column == value)
        return statement

    def _select(self, user_id: str | None, agent_name: str | None, path: str | None = None,
                key: str | None = None) -> list[StoredItem]:
        query = (select(AgentItemRow, FactRow.invalid_at, FactRow.superseded_by, FactRow.pk)
                 .outerjoin(FactRow, FactRow.id == AgentItemRow.fact_id)
                 .order_by(AgentItemRow.updated_at.desc(), AgentItemRow.pk.desc()))
        with self.db.read() as s:
            rows = s.execute(self._where(query, user_id, agent_name, path, key)).all()
        return [StoredItem(Scope(r.user_id, r.agent_name), r.path, r.item_key, r.value, r.fact_id, utc(r.created_at),
                           utc(r.updated_at), fact_valid=fact_pk is not None and invalid_at is None,
                           fact_superseded_by=superseded)
                for r, invalid_at, superseded, fact_pk in rows]
