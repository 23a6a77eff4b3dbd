"""The SQL of dream proposals: Deep Dreams waiting for a person's review."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select

from memory_core.store.actors import current_actor
from memory_core.clock import Clock, utc
from memory_core.scope import Scope
from memory_core.store.db import Database
from memory_core.store.models import DreamProposalRow


@dataclass(frozen=True)
class DreamProposal:
    id: str
    user_id: str
    agent_name: str
    created_at: datetime
    text: str
    base_hash: str
    status: str
    notes: dict[str, Any] = field(default_factory=dict)
    diff: str = ""
    decided_by: str | None = None


def _proposal(row: DreamProposalRow) -> DreamProposal:
    return DreamProposal(row.id, row.user_id, row.agent_name, utc(row.created_at), row.text, row.base_hash,
                         row.status, json.loads(row.notes or "{}"), decided_by=row.decided_by)


class ProposalStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def add(self, scope: Scope, text: str, base_hash: str, notes: dict[str, Any]) -> str:
        """Store an open proposal; earlier open ones of the scope are superseded by it (marked stale)."""
        proposal_id = "dream_" + secrets.token_hex(4)
        with self.db.write(lock=f"dream:{scope.key}") as s:
            for row in s.execute(select(DreamProposalRow).where(
                    DreamProposalRow.user_id == scope.user_id, DreamProposalRow.agent_name == scope.agent_name,
                    DreamProposalRow.status == "open")).scalars():
                row.status, row.decided_at = "stale", self.clock.now()
                s.add(row)
            s.add(DreamProposalRow(id=proposal_id, user_id=scope.user_id, agent_name=scope.agent_name,
                                   created_at=self.clock.now(), base_hash=base_hash, text=text,
                                   notes=json.dumps(notes), status="open"))
        return proposal_id

    def get(self, proposal_id: str) -> DreamProposal:
        with self.db.read() as s:
            row = s.get(DreamProposalRow, proposal_id) if isinstance(proposal_id, str) else None
        if row is None:
            raise KeyError(proposal_id)
        return _proposal(row)

    def open(self, scope: Scope) -> list[DreamProposal]:
        with self.db.read() as s:
            rows = s.execute(select(DreamProposalRow).where(
                DreamProposalRow.user_id == scope.user_id, DreamProposalRow.agent_name == scope.agent_name,
                DreamProposalRow.status == "open").order_by(DreamProposalRow.created_at.desc())).scalars().all()
        return [_proposal(r) for r in rows]

    def decide(self, proposal_id: str, status: str) -> None:
        """Close an open proposal as approved or rejected (KeyError if unknown or no longer open)."""
        with self.db.write() as s:
            row = s.get(DreamProposalRow, proposal_id)
            if row is None:
                raise KeyError(proposal_id)
            if row.status != "open":  # decided meanwhile: as unknown as a made-up id
                raise KeyError(f"{proposal_id} is {row.status}, not open")
            row.status, row.decided_at, row.decided_by = status, self.clock.now(), current_actor()
            s.add(row)
