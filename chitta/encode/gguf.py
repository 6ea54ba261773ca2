"""A minimal reader of GGUF files (llama.cpp's model format), numpy only.

Reads the header, the key/value metadata and the tensor table of a GGUF v2/v3
file and maps F32/F16 tensors read-only (``np.memmap``). Enough to run a small
encoder model in numpy (``chitta.encode.nomic``); quantised tensor types are
refused. Spec: github.com/ggml-org/ggml, docs/gguf.md (little-endian; a tensor's
dims are listed fastest-varying first, so its numpy shape is their reverse;
tensor data starts at the first ``general.alignment`` boundary, default 32,
after the tensor table).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from chitta.errors import CorruptionError

MAGIC = b"GGUF"
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
#: ggml tensor types this reader maps (0 = F32, 1 = F16).
_DTYPES = {0: "<f4", 1: "<f2"}
_MAX_STRING = 1 << 24
_MAX_ARRAY = 1 << 26


@dataclass
class GGUFFile:
    """Metadata and tensors of one GGUF file (tensors are read-only memory maps)."""

    version: int
    metadata: dict[str, Any]
    tensors: dict[str, npt.NDArray[Any]] = field(default_factory=dict)


class _Reader:
    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f, self.path = f, path

    def take(self, n: int) -> bytes:
        b = self.f.read(n)
        if len(b) != n:
            raise CorruptionError(f"{self.path}: GGUF header ends early at byte {self.f.tell()}")
        return b

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.scalar("<Q")
        if n > _MAX_STRING:
            raise CorruptionError(f"{self.path}: GGUF string of {n} bytes")
        return self.take(n).decode("utf-8", "replace")

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, n = self.scalar("<I"), self.scalar("<Q")
            if n > _MAX_ARRAY:
                raise CorruptionError(f"{self.path}: GGUF array of {n} items")
            if item in _SCALARS:
                size = struct.calcsize(_SCALARS[item])
                return np.frombuffer(self.take(n * size), _SCALARS[item]).tolist()
            return [self.value(item) for _ in range(n)]
        raise CorruptionError(f"{self.path}: unknown GGUF value type {kind}")


def read_gguf(path: str | Path) -> GGUFFile:
    """Parse ``path``; CorruptionError if it is not a well-formed GGUF v2/v3 file,
    holds a tensor type other than F32/F16, or a tensor lies outside it. Lengths
    read from the file are bounded before use; the caller checks the file's
    SHA-256 before trusting its contents."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        r = _Reader(f, path)
        if r.take(4) != MAGIC:
            raise CorruptionError(f"{path} is not a GGUF file (bad magic)")
        version = r.scalar("<I")
        if version not in (2, 3):
            raise CorruptionError(f"{path}: GGUF version {version} is not supported (2 or 3)")
        n_tensors, n_kv = r.scalar("<Q"), r.scalar("<Q")
        metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = r.string()
            metadata[key] = r.value(r.scalar("<I"))
        infos = []
        for _ in range(n_tensors):
            name = r.string()
            n_dims = r.scalar("<I")
            if n_dims > 4:
                raise CorruptionError(f"{path}: tensor {name!r} has {n_dims} dims")
            dims = [r.scalar("<Q") for _ in range(n_dims)]
            infos.append((name, dims, r.scalar("<I"), r.scalar("<Q")))
        align = int(metadata.get("general.alignment", 32))
        start = -(-f.tell() // align) * align
    out = GGUFFile(version, metadata)
    for name, dims, kind, offset in infos:
        dtype = _DTYPES.get(kind)
        if dtype is None:
            raise CorruptionError(
                f"{path}: tensor {name!r} has ggml type {kind} (only F32/F16 are read)"
            )
        count = int(np.prod(dims)) if dims else 1
        lo = start + offset
        if lo + count * np.dtype(dtype).itemsize > size:
            raise CorruptionError(f"{path}: tensor {name!r} runs past the end of the file")
        out.tensors[name] = np.memmap(path, dtype, "r", offset=lo, shape=tuple(reversed(dims)))
    return out
