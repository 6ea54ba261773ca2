"""The native status codes map to chitta.errors classes from one table."""

from __future__ import annotations

import pytest

from chitta import _core, errors

# Code numbers from csrc/include/chitta/status.h.
TABLE = [
    (1, errors.NotFound, KeyError),
    (2, errors.CorruptionError, errors.ChittaError),
    (3, errors.CrcMismatch, errors.CorruptionError),
    (4, errors.InvalidArgument, ValueError),
    (5, errors.ChittaIOError, OSError),
    (6, errors.UnsupportedFormat, errors.CorruptionError),
    (7, errors.LockedError, errors.ChittaError),
    (8, errors.ClosedError, ValueError),
]


@pytest.mark.parametrize("code,cls,also", TABLE)
def test_status_code_maps_to_class(code: int, cls: type[Exception], also: type[Exception]) -> None:
    with pytest.raises(cls) as info:
        _core._raise_status_for_test(code, "boom", "", -1)
    assert isinstance(info.value, also) and isinstance(info.value, errors.ChittaError)
    assert str(info.value) == "boom"


def test_location_travels_with_the_error() -> None:
    with pytest.raises(errors.CrcMismatch) as info:
        _core._raise_status_for_test(3, "bad", "0000002a_000000000001.seg", 4096)
    assert info.value.segment == "0000002a_000000000001.seg" and info.value.offset == 4096
