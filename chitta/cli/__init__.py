"""The ``chitta`` command line: the app (:mod:`chitta.cli.app`) and one module per
command group (``checkpoint``, ``recall``, ``serve``, ``demo``). The console script
is ``chitta.cli:main``."""

from chitta.cli.app import main

__all__ = ["main"]
