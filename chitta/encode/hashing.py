"""HashingEmbedder: the model-free fallback (``hashing-v1-d<dim>``).

A keyword matcher, not a paraphrase model: texts that share words, word pairs
or word pieces score high; a paraphrase in other words scores near zero.
Its vectors are a family of their own and never mix with a neural model's.

Features (computed in C++, ``csrc/hashembed/hash_embed.h``):

* normalisation here, in Python: Unicode NFKC, ``str.lower()``, words are the
  runs matched by ``\\w+`` (Unicode letters, digits, ``_``); punctuation,
  symbols and lone surrogates separate words;
* word unigrams, adjacent word bigrams, and character 3-, 4- and 5-grams (by
  code point) of each word wrapped in ``<`` ``>``;
* each feature hashed (FNV-1a 64 over a tag byte and its UTF-8 bytes, seeded,
  then fmix64) to bucket ``hash % dim`` with sign from bit 63;
* weight ``1 + ln(tf)``; the row is L2-normalised.

A text with no words (empty, spaces or punctuation only) embeds to the zero
vector: it has cosine 0 with everything.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.encode.base import check_positive, validate_texts
from chitta.errors import InvalidArgument

_WORD = re.compile(r"\w+")
NAME_PREFIX = "hashing-v1-d"


def normalize_text(text: str) -> str:
    """The words of ``text`` as the C++ core sees them: NFKC, lowercased, space-joined."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


class HashingEmbedder:
    """Signed feature hashing of words, word bigrams and char 3-5-grams (no model)."""

    __slots__ = ("_dim",)

    def __init__(self, dim: int = 384) -> None:
        check_positive("dim", dim)
        if dim > _core.HASHEMBED_MAX_DIM:
            raise InvalidArgument(f"dim must be <= {_core.HASHEMBED_MAX_DIM}, got {dim}")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def name(self) -> str:
        return f"{NAME_PREFIX}{self._dim}"

    @property
    def family(self) -> str:
        return self.name

    def load(self) -> None:
        """Nothing to load; present so every embedder has ``load()``."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        items = validate_texts(texts)
        if not items:
            return np.zeros((0, self._dim), dtype=np.float32)
        return _core._hash_embed([normalize_text(t) for t in items], self._dim)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"
