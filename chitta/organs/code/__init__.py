"""The code organs: file artifacts, code files, symbols, the symbol call graph,
symbol events, and the (stateless) trust organ whose operations answer "what do
I know about X and how far can I trust it" (policies in chitta/policies/code_trust.py).

Keys: a code file is its path relative to the project root (POSIX separators);
a symbol is ``<path>#<Qualified.name>`` (e.g. ``pkg/mod.py#Ledger.post``), so a
memory's artifact ref ``path#Qualified.name`` names a symbol exactly. The
indexer (chitta/policies/code_index.py) produces the ops; replay never parses.
"""

from chitta.organs.code.artifacts import ArtifactsOrgan
from chitta.organs.code.call_graph import CallGraphOrgan
from chitta.organs.code.events import SymbolEventsOrgan
from chitta.organs.code.files import CodeFilesOrgan
from chitta.organs.code.symbols import SymbolsOrgan
from chitta.organs.code.trust import TrustOrgan

__all__ = [
    "ArtifactsOrgan",
    "CallGraphOrgan",
    "CodeFilesOrgan",
    "SymbolEventsOrgan",
    "SymbolsOrgan",
    "TrustOrgan",
]
