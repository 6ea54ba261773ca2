"""The chitta error hierarchy.

Every error chitta raises on purpose is a :class:`ChittaError`. Where a
built-in exception already means the same thing, the class also derives from
it, so ``except ValueError`` / ``except KeyError`` / ``except OSError`` keep
working. The native core's status codes map to these classes from one table
(``_ext/errors.cc``).
"""

from __future__ import annotations


class ChittaError(Exception):
    """Base class of every error chitta raises on purpose."""


class InvalidArgument(ChittaError, ValueError):
    """The caller passed something chitta cannot use; nothing was changed."""


class NotFound(ChittaError, KeyError):
    """No live memory (or other object) has this id."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class DuplicateFact(InvalidArgument):
    """A curated fact with the same payload hash is already filed; nothing was written
    (supersede that fact to change it)."""


class RoleRefused(ChittaError, PermissionError):
    """The curated layer refuses this role or caller by rule: a reviewer receives no
    memory, and a task cannot pin (or re-pin) its own recall."""


class CandidateLaundering(InvalidArgument):
    """An edge from a candidate memory (the quarantine band of open-weight output) to
    an established one: a quarantined memory may not cite established knowledge.
    Nothing was logged (docs/PROVENANCE.md)."""


class ProvenanceRefused(ChittaError, PermissionError):
    """The writer's provenance may not write this kind directly (``can_write_kind``:
    open-weight-generated writes may not be decisions or code facts), or a door
    refuses the provenance claimed. Nothing was logged (docs/PROVENANCE.md)."""


class ChittaIOError(ChittaError, OSError):
    """The operating system refused a read or write."""


class LostWritesError(ChittaIOError):
    """Durability ``"buffered"``: writing the buffer failed (a full disk, say) and lost
    records the handle had acknowledged. ``lost_ids``: the memories those records put,
    ascending; ``lost_seqnos``: every lost record's seqno. The handle refuses every later
    call with this error; reopen the field (the log holds everything before the loss)."""

    lost_ids: tuple[int, ...] = ()
    lost_seqnos: tuple[int, ...] = ()


class LockedError(ChittaError):
    """A named instance is already held by a live process."""


class ClosedError(ChittaError, ValueError):
    """The field (or index) was used after ``close()``."""


class NotAFieldError(ChittaError, FileNotFoundError):
    """The path is not a chitta field and ``create=False`` was given."""


class CorruptionError(ChittaError):
    """Bytes on disk are damaged. ``segment`` and ``offset`` say where, when known."""

    segment: str | None = None
    offset: int | None = None


class CrcMismatch(CorruptionError):
    """A complete record whose CRC-32C does not match its bytes."""


class UnknownOpType(CorruptionError):
    """A record carries an op type byte this version of chitta does not know."""


class UnsupportedFormat(CorruptionError):
    """A file was written by a newer major format version than this reader knows."""


class ModelChecksumError(CorruptionError):
    """An embedding model file's SHA-256 differs from the value chitta pins for it."""


class EmbedderMismatch(ChittaError, ValueError):
    """The field's vectors come from another embedder family than the one given."""


class EmbedderUnavailable(ChittaError, ImportError):
    """An embedder's optional packages (or model files) are not installed."""


class RemoteError(ChittaError):
    """The shared object store (``remote=``) refused or failed a request, or holds
    something chitta will not use (another field, a damaged or foreign object)."""


class RemoteUnavailable(RemoteError, ConnectionError):
    """The object store could not be reached in time; local data is unchanged."""


class CheckpointIgnored(UserWarning):
    """A warning, not an error: the field's checkpoint could not be used (damaged,
    unknown version, not matching the log) and the field was rebuilt from its log."""


# Aliases in the naming style of CONVENTIONS.md.
InvalidArgumentError = InvalidArgument
NotFoundError = NotFound

__all__ = [
    "CandidateLaundering",
    "CheckpointIgnored",
    "ChittaError",
    "ChittaIOError",
    "ClosedError",
    "CorruptionError",
    "CrcMismatch",
    "DuplicateFact",
    "EmbedderMismatch",
    "EmbedderUnavailable",
    "InvalidArgument",
    "InvalidArgumentError",
    "LockedError",
    "LostWritesError",
    "ModelChecksumError",
    "NotAFieldError",
    "NotFound",
    "NotFoundError",
    "ProvenanceRefused",
    "RemoteError",
    "RemoteUnavailable",
    "RoleRefused",
    "UnknownOpType",
    "UnsupportedFormat",
]
