"""remember()'s native plain path (``_core.PutQueue``, csrc/wal/put_queue.*):
the same bytes as ``ops.encode``, the same text rules and messages as
``chitta.ops.checks.text`` (Python's checks decide whatever the native side
does not take), the field's clock, one id counter for every write path, and
the queue handed to the organs as columns in call order."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta import _core, ops
from chitta.errors import ChittaError, ClosedError, InvalidArgument
from chitta.ops import checks as v


def _records(root: Path) -> list[tuple[int, bytes]]:
    log = _core.SegmentLog(str(root), read_only=True)
    result = log.read_new()
    out = [(int(result.op_types[i]), result.payload(i)) for i in range(len(result))]
    log.close()
    return out


TEXTS = [
    "a",
    "plain ascii text",
    "caf\u00e9 \u2014 na\u00efve",
    "emoji \U0001f600",
    " padded ",
    "x" * 5000,
]


def test_bytes_on_disk_are_ops_encode_of_the_put(tmp_path: Path) -> None:
    clock = iter(range(1_700_000_000, 1_800_000_000, 7))
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: next(clock) + 0.1234) as f:
        ids = [f.remember(t) for t in TEXTS]
    want = [
        ops.encode(ops.PutPayload(id=mid, text=t, created_ms=ms, written_ms=ms))
        for mid, t, ms in zip(
            ids, TEXTS, [(1_700_000_000 + 7 * i) * 1000 + 123 for i in range(len(TEXTS))]
        )
    ]
    assert _records(tmp_path / "f") == [(int(ops.OpType.PutPayload), w) for w in want]


def test_system_clock_is_epoch_ms(tmp_path: Path) -> None:
    import time

    with chitta.open(tmp_path / "f", embedder=None) as f:
        lo = int(time.time() * 1000)
        mid = f.remember("now")
        hi = int(time.time() * 1000)
        m = f.get(mid)
    assert lo <= m.created_ms == m.written_ms <= hi


@pytest.mark.parametrize(
    "bad",
    ["", " ", "\t\n", "\x1c\x1d", "\u3000\u2003", "\ud800", "a\udfffb", b"bytes", 5, None, ["x"]],
    ids=repr,
)
def test_bad_text_raises_what_validate_raises_and_changes_nothing(
    tmp_path: Path, bad: object
) -> None:
    with pytest.raises(InvalidArgument) as want:
        v.text(bad)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        first = f.remember("before")
        with pytest.raises(InvalidArgument) as got:
            f.remember(bad)  # type: ignore[arg-type]
        assert str(got.value) == str(want.value)
        assert f.ids() == [first]
        assert f.remember("after") == first + 1  # a refused text takes no id
    assert len(_records(tmp_path / "f")) == 2


def test_text_byte_limit_is_the_validators(tmp_path: Path) -> None:
    limit = v.MAX_TEXT_BYTES
    at_limit = "\u00e9" * (limit // 2)  # two bytes each: exactly the limit
    over = at_limit + "x"
    with chitta.open(tmp_path / "f", embedder=None) as f:
        mid = f.remember(at_limit)
        with pytest.raises(InvalidArgument, match="bytes of UTF-8; the limit is"):
            f.remember(over)
        assert f.get(mid).text == at_limit and len(f) == 1


def test_a_str_subclass_is_stored_as_a_plain_str(tmp_path: Path) -> None:
    class Note(str):
        pass

    with chitta.open(tmp_path / "f", embedder=None) as f:
        mid = f.remember(Note("subclassed"))
        text = f.get(mid).text
    assert type(text) is str and text == "subclassed"


def test_every_write_path_draws_from_one_counter_and_continues_after_reopen(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None, instance_id=77) as f:
        a = f.remember("fast")
        b = f.remember("tagged", tags=["t"])  # the Python path
        c, d = f.remember_many(["one", "two"])
        e = f.remember("fast again")
    assert [x & 0xFFFFFFFF for x in (a, b, c, d, e)] == [1, 2, 3, 4, 5]
    assert all(x >> 32 == 77 for x in (a, b, c, d, e))
    with chitta.open(root, embedder=None, instance_id=77) as f:
        assert f.remember("after reopen") & 0xFFFFFFFF == 6


def test_used_up_ids_raise_and_change_nothing(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.core.pending_puts.start_ids(2**32 - 1)
        last = f.remember("the last one")
        assert last & 0xFFFFFFFF == 2**32 - 1
        for call in (
            lambda: f.remember("one more"),
            lambda: f.remember("tagged", tags=["t"]),
            lambda: f.remember_many(["x"]),
        ):
            with pytest.raises(ChittaError, match="used all 2\\*\\*32 memory ids"):
                call()
        assert f.ids() == [last]
    assert len(_records(tmp_path / "f")) == 1


def test_closed_and_read_only_fields_refuse(tmp_path: Path) -> None:
    root = tmp_path / "f"
    f = chitta.open(root, embedder=None)
    f.remember("x")
    f.close()
    with pytest.raises(ClosedError, match="the field is closed"):
        f.remember("y")
    with chitta.open(root, embedder=None, read_only=True) as g:
        with pytest.raises(InvalidArgument, match="read_only"):
            g.remember("z")
        assert len(g) == 1


def test_queue_takes_columns_in_order_and_drains_at_its_limit(tmp_path: Path) -> None:
    log = _core.SegmentLog(str(tmp_path), instance_id=5)
    q = log.put_queue()
    assert q.take() is None and len(q) == 0
    drained: list[int] = []
    q.set_drain(lambda: drained.append(len(q)), 3)
    ids = [q.put(t) for t in ("one", "tw\u00f6", "three", "four")]
    assert drained == [
        3,
        4,
    ]  # called after each put while `limit` or more wait (Field's drain takes them)
    assert [i & 0xFFFFFFFF for i in ids] == [1, 2, 3, 4] and len(q) == 4  # type: ignore[operator]
    taken = q.take()
    assert taken is not None and len(q) == 0 and q.take() is None
    mids, ms, arena, offsets = taken
    assert mids.dtype == np.uint64 and mids.tolist() == ids
    assert ms.dtype == np.int64 and len(ms) == 4
    assert arena == "onetw\u00f6threefour".encode() and offsets.tolist() == [0, 3, 7, 12, 16]
    mids[0] = 0  # the columns are the caller's own copies
    q.put("five")
    again = q.take()
    assert again is not None and again[0].tolist() == [ids[-1] + 1]  # type: ignore[operator]
    log.close()
    with pytest.raises(ChittaError):
        q.put("after close")  # the log says so; Field checks before it gets here


def test_clock_errors_propagate_and_take_no_id(tmp_path: Path) -> None:
    broken = [False]

    def clock() -> float:
        if broken[0]:
            raise RuntimeError("clock broke")
        return 1_700_000_000.0

    with chitta.open(tmp_path / "f", embedder=None, clock=clock) as f:
        a = f.remember("one")
        broken[0] = True
        with pytest.raises(RuntimeError, match="clock broke"):
            f.remember("two")
        broken[0] = False
        b = f.remember("three")
        assert b == a + 1 and f.get(b).created_ms == 1_700_000_000_000


def test_threads_get_unique_ids_and_every_put_is_applied(tmp_path: Path) -> None:
    root = tmp_path / "f"
    per, threads = 1500, 6
    got: list[list[int]] = [[] for _ in range(threads)]
    with chitta.open(root, embedder=None) as f:

        def work(t: int) -> None:
            for i in range(per):
                got[t].append(f.remember(f"thread {t} note {i}"))

        pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        flat = [m for run in got for m in run]
        assert len(set(flat)) == per * threads and len(f) == per * threads
        texts = {f.get(m).text for m in flat[::97]}
    with chitta.open(root, embedder=None, read_only=True) as g:
        assert sorted(g.ids()) == sorted(flat)
        assert {g.get(m).text for m in flat[::97]} == texts
    assert os.path.isdir(root)


def test_remember_entry_keeps_the_methods_face(tmp_path: Path) -> None:
    import inspect

    from chitta.field import Field

    with chitta.open(tmp_path / "f", embedder=None) as f:
        assert inspect.signature(f.remember) == inspect.signature(Field.remember.__get__(f))
        assert f.remember.__doc__ == Field.remember.__doc__
        a = f.remember("plain")
        b = f.remember("with keywords", kind="thought", tags=["t"], confidence=0.5)
        c = f.remember(text="text as a keyword")
        m = f.get(b)
        assert (m.kind, m.tags, m.confidence) == ("thought", ("t",), 0.5)
        assert f.ids() == [a, b, c] and f.get(c).text == "text as a keyword"
        with pytest.raises(TypeError):
            f.remember()  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            f.remember("x", "y")  # type: ignore[misc]
        with pytest.raises(InvalidArgument, match="kind must be one of"):
            f.remember("x", kind="nonsense")


def test_a_subclass_override_is_not_bypassed(tmp_path: Path) -> None:
    seen: list[str] = []

    class Mine(chitta.Field):
        def remember(self, text: str, **kw: object) -> int:  # type: ignore[override]
            seen.append(text)
            return super().remember(text, **kw)  # type: ignore[arg-type]

    with Mine(tmp_path / "f", embedder=None) as f:
        f.remember("counted")
    assert seen == ["counted"]


def test_the_entry_does_not_keep_its_field_alive(tmp_path: Path) -> None:
    import gc
    import weakref

    f = chitta.open(tmp_path / "f", embedder=None, instance_id=31)
    f.remember("x")
    ref = weakref.ref(f)
    entry = f.remember
    del f
    assert ref() is None  # freed by reference counting alone: no cycle through the entry
    gc.collect()
    late = entry("after the field is gone")  # the queue holds the log: the record lands in it
    with pytest.raises(ReferenceError, match="keep it in a variable"):
        entry("with a keyword", tags=["t"])  # the Python path needs its field
    del entry  # it held the log (as a bound method would hold the field)
    with chitta.open(
        tmp_path / "f", embedder=None, instance_id=31
    ) as g:  # its instance lock was released
        assert len(g) == 2 and g.get(late).text == "after the field is gone"


def test_remember_on_a_field_used_in_one_expression(tmp_path: Path) -> None:
    mid = chitta.open(tmp_path / "f", embedder=None).remember(
        "one expression"
    )  # ReferenceError before
    with chitta.open(tmp_path / "f", embedder=None) as g:
        assert g.get(mid).text == "one expression"


def test_a_held_entry_of_a_closed_field_writes_nothing(tmp_path: Path) -> None:
    f = chitta.open(tmp_path / "f", embedder=None)
    entry = f.remember
    f.close()
    with pytest.raises(chitta.ClosedError):
        entry("after close")
    del f, entry
    with chitta.open(tmp_path / "f", embedder=None) as g:
        assert len(g) == 0
