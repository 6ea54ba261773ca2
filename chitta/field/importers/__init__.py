"""Importers: turn external records (conversations, ...) into memories the
recommended way. Each uses only the Field's public write API."""

from chitta.field.importers.conversation import (
    Turn,
    context_texts,
    import_conversation,
    keyword_contexts,
)

__all__ = ["Turn", "context_texts", "import_conversation", "keyword_contexts"]
