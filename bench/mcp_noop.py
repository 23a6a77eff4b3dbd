"""A no-op MCP server built with the same SDK and the same tool names as memory_core's (the floor that `bench mcp`
compares with): `python -m bench.mcp_noop PORT` serves streamable HTTP at /mcp, answering at once."""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


class MemoryContext(BaseModel):
    text: str
    tokens: int
    max_tokens: int
    encoding: str
    facts_included: int
    facts_dropped: int
    truncated: bool


class Hit(BaseModel):
    kind: str
    ref: str
    text: str
    score: float
    source: str | None = None


class SearchResult(BaseModel):
    hits: list[Hit]


def build() -> MCPServer:
    server = MCPServer("noop", version="0.1.0")

    def get_memory_context(max_tokens: int | None = None, model: str | None = None,
                           query: str | None = None) -> MemoryContext:
        """Nothing: the same shape of answer."""
        return MemoryContext(text="Facts:\n- [preference | 0.90] User likes tea", tokens=12,
                             max_tokens=max_tokens or 2000, encoding="o200k_base", facts_included=1,
                             facts_dropped=0, truncated=False)

    def search_memory(query: str, k: int = 10) -> SearchResult:
        """Nothing: the same shape of answer."""
        return SearchResult(hits=[Hit(kind="fact", ref="fact_00000000", text="User likes tea", score=1.0)])

    def list_facts() -> dict:
        return {"count": 0, "facts": []}

    for tool in (get_memory_context, search_memory, list_facts):
        server.add_tool(tool)
    return server


def main() -> None:
    port = int(sys.argv[1])
    app = build().streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
