"""The SQL of documents kept as rows (`Settings.documents = "database"`)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import make_url

from memory_core.clock import Clock
from memory_core.store.document_paths import check_folder, check_path, is_document_path
from memory_core.scope import Scope
from memory_core.text.validation import check_memory_text
from memory_core.store.db import Database
from memory_core.store.models import DocumentRow


class DatabaseDocumentStore:
    """Documents as rows, for hosts whose disk does not survive a reboot (Streamlit Community Cloud)."""

    kind = "database"

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    @staticmethod
    def _get(session, scope: Scope, path: str) -> DocumentRow | None:
        return session.get(DocumentRow, (scope.user_id, scope.agent_name, check_path(path)))

    def read(self, scope: Scope, path: str) -> str | None:
        check_path(path)
        with self.db.read() as s:
            return self.read_in(s, scope, path)

    def read_in(self, session, scope: Scope, path: str) -> str | None:
        """`read` inside the caller's transaction (a tier that records something along with the document)."""
        row = self._get(session, scope, path)
        return row.content if row else None

    def write(self, scope: Scope, path: str, text: str) -> None:
        check_path(path)
        text = check_memory_text(text, f"document {path}")
        with self.db.write(lock=f"doc:{scope.key}:{path}") as s:
            self.write_in(s, scope, path, text)

    def write_in(self, session, scope: Scope, path: str, text: str) -> None:
        """`write` inside the caller's transaction: the document and the caller's rows commit together."""
        text = check_memory_text(text, f"document {path}")
        row = self._get(session, scope, path)
        if row is None:
            session.add(DocumentRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path, content=text,
                                    updated_at=self.clock.now()))
        else:
            row.content, row.updated_at = text, self.clock.now()
            session.add(row)

    def append(self, scope: Scope, path: str, block: str, header: str) -> None:
        check_path(path)
        block, header = check_memory_text(block, f"block of {path}"), check_memory_text(header, f"header of {path}")
        with self.db.write(lock=f"doc:{scope.key}:{path}") as s:
            row = self._get(s, scope, path)
            if row is None:
                s.add(DocumentRow(user_id=scope.user_id, agent_name=scope.agent_name, path=path,
                                  content=header + block, updated_at=self.clock.now()))
            else:
                row.content, row.updated_at = row.content + block, self.clock.now()
                s.add(row)

    def list(self, scope: Scope, prefix: str) -> list[str]:
        """The documents directly in `prefix` ("", "memory" or "memory/dreams"), nothing else."""
        folder = check_folder(prefix)
        with self.db.read() as s:
            paths = s.execute(select(DocumentRow.path).where(
                DocumentRow.user_id == scope.user_id, DocumentRow.agent_name == scope.agent_name)).scalars().all()
        return sorted(p for p in paths if is_document_path(p) and p.rpartition("/")[0] == folder)

    def scopes(self) -> list[Scope]:
        """Every scope that has a document."""
        with self.db.read() as s:
            return [Scope(u, a) for u, a in s.execute(select(DocumentRow.user_id, DocumentRow.agent_name).distinct())]

    def delete(self, scope: Scope, path: str) -> None:
        check_path(path)
        with self.db.write(lock=f"doc:{scope.key}:{path}") as s:
            row = self._get(s, scope, path)
            if row is not None:
                s.delete(row)

    def describe(self, scope: Scope) -> str:
        return f"database {make_url(self.db.url).render_as_string(hide_password=True)} ({scope.key})"
