"""Chat models behind one small protocol."""

from memory_core.llm.base import ChatModel, ChatResult
from memory_core.llm.scripted import ScriptedChatModel

__all__ = ["ChatModel", "ChatResult", "ScriptedChatModel"]
