"""memory_core: long-term memory for LLM agents.

    from memory_core import Memory, Settings
    with Memory(Settings(home="./memory_data")) as memory:
        memory.facts.add("User prefers dark mode", "preference", 0.9)
        print(memory.format_for_injection())
"""

# Loaded on first use (PEP 562), so that `import memory_core` costs next to nothing and a command that needs no
# database never loads SQLAlchemy: `memory_core.Memory` imports the store the first time it is named.
_WHERE = {
    "ManualClock": "memory_core.clock",
    "SystemClock": "memory_core.clock",
    "CompressionResult": "memory_core.context.compression",
    "compress_messages": "memory_core.context.compression",
    "InjectionReport": "memory_core.context.injection",
    "build_injection": "memory_core.context.injection",
    "format_memory_for_injection": "memory_core.context.injection",
    "Plan": "memory_core.context.plans",
    "PlanStep": "memory_core.context.plans",
    "SWRCache": "memory_core.context.swr",
    "BudgetExceeded": "memory_core.errors",
    "EmbeddingError": "memory_core.errors",
    "IngestError": "memory_core.errors",
    "LLMError": "memory_core.errors",
    "LLMReplyError": "memory_core.errors",
    "MemoryCoreError": "memory_core.errors",
    "QueueFullError": "memory_core.errors",
    "AuditEntry": "memory_core.facts.api",
    "CATEGORIES": "memory_core.facts.api",
    "Fact": "memory_core.facts.api",
    "ChatModel": "memory_core.llm",
    "ChatResult": "memory_core.llm",
    "ScriptedChatModel": "memory_core.llm",
    "Memory": "memory_core.memory",
    "UpdateResult": "memory_core.memory",
    "ApiToken": "memory_core.policy.access",
    "Grant": "memory_core.policy.access",
    "Principal": "memory_core.policy.access",
    "ROLES": "memory_core.policy.access",
    "acting_as": "memory_core.store.actors",
    "ImportReport": "memory_core.portability.importer",
    "SearchHit": "memory_core.search.index",
    "Settings": "memory_core.settings",
    "DreamProposal": "memory_core.store.proposal_store",
    "Injection": "memory_core.store.usage_store",
    "UsageRecord": "memory_core.store.usage_store",
    "count_tokens": "memory_core.text.tokens",
    "ContextSession": "memory_core.tiers.context",
    "CoreVersion": "memory_core.tiers.core",
    "DreamResult": "memory_core.tiers.dream",
    "ScopedMemory": "memory_core.views.scoped",
}

__all__ = [
    "Memory", "Settings", "Fact", "AuditEntry", "CATEGORIES", "UpdateResult", "format_memory_for_injection",
    "build_injection", "InjectionReport", "count_tokens", "SearchHit", "DreamResult", "ContextSession",
    "compress_messages", "CompressionResult", "Plan", "PlanStep", "SWRCache", "ChatModel", "ChatResult",
    "ScriptedChatModel", "ManualClock", "SystemClock", "MemoryCoreError", "LLMError", "LLMReplyError",
    "EmbeddingError", "QueueFullError", "IngestError", "ScopedMemory", "ImportReport", "Grant", "ApiToken",
    "Principal", "ROLES", "acting_as", "CoreVersion", "BudgetExceeded", "UsageRecord", "Injection", "DreamProposal",
]


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'memory_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
