"""The command line's exit codes, one per kind of failure (``chitta --help`` lists them).

Light on purpose (only :mod:`chitta.errors`): the served fast path
(:mod:`chitta.cli.served`) maps a daemon's error to the same code as the full CLI.
"""

from __future__ import annotations

from chitta import errors

EXIT_ERROR = 1
EXIT_USAGE = 2  # click's own code for usage errors; a bad value through the API is one too
EXIT_TORN = 3
EXIT_CORRUPT = 4
EXIT_NOT_FOUND = 5
EXIT_LOCKED = 6


def exit_code(exc: errors.ChittaError) -> int:
    """The code a command exits with after ``exc``."""
    if isinstance(exc, errors.CorruptionError):
        return EXIT_CORRUPT
    if isinstance(exc, (errors.NotFound, errors.NotAFieldError)):
        return EXIT_NOT_FOUND
    if isinstance(exc, errors.LockedError):
        return EXIT_LOCKED
    if isinstance(exc, errors.InvalidArgument):
        return EXIT_USAGE
    return EXIT_ERROR


def exit_code_named(type_name: str) -> int:
    """The code for an error known only by its class name (a daemon's JSON reply)."""
    cls = getattr(errors, type_name, None)
    if isinstance(cls, type) and issubclass(cls, errors.ChittaError):
        return exit_code(cls.__new__(cls))
    return EXIT_ERROR


__all__ = [
    "EXIT_CORRUPT",
    "EXIT_ERROR",
    "EXIT_LOCKED",
    "EXIT_NOT_FOUND",
    "EXIT_TORN",
    "EXIT_USAGE",
    "exit_code",
    "exit_code_named",
]
