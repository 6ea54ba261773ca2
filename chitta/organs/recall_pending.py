"""Keyword documents waiting for the recall-index organ's next BM25 flush, held
as runs of rows over the puts' UTF-8 text arenas (decoded only at the flush)
plus single documents from per-op puts and updates.

Each pending document has a sequence number, stored in the rows' ``text_seq``
column (recall_rows.py); an entry is still wanted iff its row's ``text_seq``
equals its number, so a drop or a newer text cancels an older entry without
touching the run that holds it. The flush hands the wanted documents to BM25 in
sequence order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.organs.recall_rows import RowColumns

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class PendingText:
    def __init__(self, cols: RowColumns) -> None:
        self._cols = cols
        # (rows, first seq, source): source is (arena, offsets, run indices, overrides by run index)
        # or a list of documents aligned with rows.
        self._runs: list[tuple[I64, int, Any]] = []
        self._single: dict[int, tuple[int, str]] = {}  # row -> (seq, document)
        self._seq = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def _stamp(self, rows: I64) -> int:
        seq_col = self._cols.text_seq
        self._count += len(rows) - int(np.count_nonzero(seq_col[rows]))
        first = self._seq + 1
        seq_col[rows] = np.arange(first, first + len(rows))
        self._seq += len(rows)
        return first

    def add_arena(
        self, rows: I64, arena: bytes, offsets: I64, idx: I64, overrides: dict[int, str]
    ) -> None:
        """Rows ``rows`` get the texts ``arena[offsets[i]:offsets[i+1]]`` for ``i`` in
        ``idx`` (or ``overrides[i]``): distinct rows, none pending."""
        if len(rows):
            self._runs.append((rows, self._stamp(rows), (arena, offsets, idx, overrides)))

    def add_texts(self, rows: I64, texts: list[str]) -> None:
        if len(rows):
            self._runs.append((rows, self._stamp(rows), texts))

    def set(self, row: int, document: str) -> None:
        seq_col = self._cols.v_seq
        if not seq_col[row]:
            self._count += 1
        seq = self._seq = self._seq + 1
        seq_col[row] = seq
        self._single[row] = (seq, document)

    def discard(self, row: int) -> bool:
        """Cancel ``row``'s pending document; whether it had one."""
        seq_col = self._cols.text_seq
        if not seq_col[row]:
            return False
        seq_col[row] = 0
        self._count -= 1
        return True

    def take(self) -> tuple[U64, list[str]]:
        """The wanted (id, document) pairs in sequence order; nothing is pending after."""
        seq_col, ids = self._cols.text_seq, self._cols.ids
        all_rows: list[I64] = []
        all_seqs: list[I64] = []
        docs: list[str] = []
        for rows, first, source in self._runs:
            seqs = np.arange(first, first + len(rows))
            keep = seq_col[rows] == seqs
            all_rows.append(rows[keep])
            all_seqs.append(seqs[keep])
            if isinstance(source, list):
                docs.extend(d for d, k in zip(source, keep.tolist()) if k)
                continue
            arena, offsets, idx, overrides = source
            sel = idx[keep].tolist()
            starts, ends = offsets[:-1].tolist(), offsets[1:].tolist()
            if overrides:
                docs.extend(
                    overrides[i] if i in overrides else arena[starts[i] : ends[i]].decode()
                    for i in sel
                )
            else:
                docs.extend([arena[starts[i] : ends[i]].decode() for i in sel])
        if self._single:
            rows1 = np.fromiter(self._single.keys(), np.int64, len(self._single))
            seqs1 = np.fromiter((s for s, _ in self._single.values()), np.int64, len(self._single))
            keep = seq_col[rows1] == seqs1
            all_rows.append(rows1[keep])
            all_seqs.append(seqs1[keep])
            docs.extend(d for (_, d), k in zip(self._single.values(), keep.tolist()) if k)
        self._runs.clear()
        self._single.clear()
        self._count = 0
        if not all_rows:
            return np.zeros(0, np.uint64), []
        rows = np.concatenate(all_rows)
        seqs = np.concatenate(all_seqs)
        seq_col[rows] = 0
        order = np.argsort(seqs, kind="stable")
        if len(order) and not bool(np.all(order[1:] > order[:-1])):
            docs = [docs[i] for i in order.tolist()]
            rows = rows[order]
        return ids[rows], docs
