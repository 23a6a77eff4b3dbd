"""Moving memory in and out: other tools' exports read into neutral records, and memory_core's own bundles."""

from memory_core.portability.detect import detect_format, read_import
from memory_core.portability.records import (ImportedConversation, ImportedDocument, ImportedFact, ImportedMessage, ParsedImport)

__all__ = ["ImportedConversation", "ImportedDocument", "ImportedFact", "ImportedMessage", "ParsedImport",
           "detect_format", "read_import"]
