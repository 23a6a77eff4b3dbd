"""The errors of memory_core: one root, a few named leaves."""


class MemoryCoreError(Exception):
    """Root of every error raised by memory_core (besides KeyError/ValueError where the API says so)."""


class LLMError(MemoryCoreError):
    """The configured LLM could not be reached or answered with an error. Never carries the API key."""


class LLMReplyError(MemoryCoreError):
    """The LLM answered, but the reply cannot be used at all."""


class EmbeddingError(MemoryCoreError):
    """The embedder failed."""


class QueueFullError(MemoryCoreError):
    """The update queue holds its maximum number of pending keys."""


class BudgetExceeded(MemoryCoreError):
    """The scope has spent its daily_token_budget of LLM tokens today; nothing was changed."""


class IngestError(MemoryCoreError):
    """An uploaded or pasted conversation cannot be parsed."""


class InvalidIdError(KeyError, ValueError, MemoryCoreError):
    """An id that is not even well formed (not a string, say): unknown, and a bad argument, at once."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0]) if self.args else ""


class StaleEditError(ValueError, MemoryCoreError):
    """An edit made on a version of a fact that has changed since (another tab, another person, an agent)."""
