"""memory_core: long-term memory for LLM agents.

    from memory_core import Memory, Settings
    with Memory(Settings(home="./memory_data")) as memory:
        memory.facts.add("User prefers dark mode", "preference", 0.9)
        print(memory.format_for_injection())
"""

from memory_core.policy.access import ROLES, ApiToken, Grant, Principal
from memory_core.policy.actors import acting_as
from memory_core.clock import ManualClock, SystemClock
from memory_core.context.compression import CompressionResult, compress_messages
from memory_core.errors import (BudgetExceeded, EmbeddingError, IngestError, LLMError, LLMReplyError, MemoryCoreError,
                     QueueFullError)
from memory_core.facts.api import CATEGORIES, AuditEntry, Fact
from memory_core.context.injection import InjectionReport, build_injection, format_memory_for_injection
from memory_core.llm import ChatModel, ChatResult, ScriptedChatModel
from memory_core.memory import Memory, UpdateResult
from memory_core.context.plans import Plan, PlanStep
from memory_core.portability.importer import ImportReport
from memory_core.views.scoped import ScopedMemory
from memory_core.search.index import SearchHit
from memory_core.store.proposal_store import DreamProposal
from memory_core.store.usage_store import Injection, UsageRecord
from memory_core.settings import Settings
from memory_core.context.swr import SWRCache
from memory_core.tiers.context import ContextSession
from memory_core.tiers.core import CoreVersion
from memory_core.tiers.dream import DreamResult
from memory_core.text.tokens import count_tokens

__all__ = [
    "Memory", "Settings", "Fact", "AuditEntry", "CATEGORIES", "UpdateResult", "format_memory_for_injection",
    "build_injection", "InjectionReport", "count_tokens", "SearchHit", "DreamResult", "ContextSession",
    "compress_messages", "CompressionResult", "Plan", "PlanStep", "SWRCache", "ChatModel", "ChatResult",
    "ScriptedChatModel", "ManualClock", "SystemClock", "MemoryCoreError", "LLMError", "LLMReplyError",
    "EmbeddingError", "QueueFullError", "IngestError", "ScopedMemory", "ImportReport", "Grant", "ApiToken",
    "Principal", "ROLES", "acting_as", "CoreVersion", "BudgetExceeded", "UsageRecord", "Injection", "DreamProposal",
]
