"""Chat models behind one small protocol."""

from .base import ChatModel, ChatResult
from .scripted import ScriptedChatModel

__all__ = ["ChatModel", "ChatResult", "ScriptedChatModel"]
