"""memory_core: long-term memory for LLM agents.

    from memory_core import Memory, Settings
    with Memory(Settings(home="./memory_data")) as memory:
        memory.facts.add("User prefers dark mode", "preference", 0.9)
        print(memory.format_for_injection())
"""

from .access import ROLES, ApiToken, Grant, Principal
from .actors import acting_as
from .clock import ManualClock, SystemClock
from .compression import CompressionResult, compress_messages
from .errors import (BudgetExceeded, EmbeddingError, IngestError, LLMError, LLMReplyError, MemoryCoreError,
                     QueueFullError)
from .facts import CATEGORIES, AuditEntry, Fact
from .injection import InjectionReport, build_injection, format_memory_for_injection
from .llm import ChatModel, ChatResult, ScriptedChatModel
from .memory import Memory, UpdateResult
from .plans import Plan, PlanStep
from .portability.importer import ImportReport
from .scoped import ScopedMemory
from .search.index import SearchHit
from .store.proposal_store import DreamProposal
from .store.usage_store import Injection, UsageRecord
from .settings import Settings
from .swr import SWRCache
from .tiers.context import ContextSession
from .tiers.core import CoreVersion
from .tiers.dream import DreamResult
from .tokens import count_tokens

__all__ = [
    "Memory", "Settings", "Fact", "AuditEntry", "CATEGORIES", "UpdateResult", "format_memory_for_injection",
    "build_injection", "InjectionReport", "count_tokens", "SearchHit", "DreamResult", "ContextSession",
    "compress_messages", "CompressionResult", "Plan", "PlanStep", "SWRCache", "ChatModel", "ChatResult",
    "ScriptedChatModel", "ManualClock", "SystemClock", "MemoryCoreError", "LLMError", "LLMReplyError",
    "EmbeddingError", "QueueFullError", "IngestError", "ScopedMemory", "ImportReport", "Grant", "ApiToken",
    "Principal", "ROLES", "acting_as", "CoreVersion", "BudgetExceeded", "UsageRecord", "Injection", "DreamProposal",
]
