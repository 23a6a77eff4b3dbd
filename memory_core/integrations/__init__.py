"""memory_core under agent frameworks: `memory_core.integrations.langgraph.MemoryCoreStore` (LangGraph's
`BaseStore`; `pip install memory_core[langgraph]`). The framework-neutral part is `integrations.items`."""
