"""The C API as a real C host uses it: a program compiled against the installed package.

``docs/example.c`` is built with the system C compiler against ``chitta.get_include()``
and ``chitta.get_lib_dir()``, run on a field Python wrote, and its appends are read
back by Python. ctypes (a second, independent client of the same library) checks that
bad arguments come back as codes and never crash the process.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import pytest

import chitta
from chitta.field.native_paths import c_build_command

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "example.c"
CF_OK, CF_ENOTFOUND, CF_EINVAL = 0, 1, 4


@pytest.fixture(scope="module")
def example_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("capi") / "example"
    cmd = c_build_command(EXAMPLE, out, ["-std=c99", "-Wall", "-Wextra", "-Werror"])
    if cmd is None:
        pytest.skip("no C compiler found")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


def _run(exe: Path, field: Path) -> list[str]:
    done = subprocess.run(
        [str(exe), str(field)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=exe.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_native_paths_hold_header_and_library() -> None:
    header = Path(chitta.get_include()) / "chitta" / "chitta_field.h"
    assert "cf_status cf_open(const char* path, cf_field_t** out);" in header.read_text()
    assert (Path(chitta.get_lib_dir()) / "libchitta_field.so").is_file()


def test_c_program_reads_python_memories_and_python_sees_its_appends(
    example_exe: Path, tmp_path: Path
) -> None:
    root = tmp_path / "field"
    texts = ["the build uses ninja", "naïve café ☕ unicode survives", "x" * 300]
    with chitta.open(root, embedder=None) as field:
        ids = [field.remember(t) for t in texts]
        field.forget(ids[2])  # a non-PutPayload record the C side must count too

        lines = _run(example_exe, root)  # the C host works while Python holds the field open

        puts = [line for line in lines if line.startswith("put ")]
        assert [p.split(" ", 1)[1] for p in puts] == [f"{i}\t{t}" for i, t in zip(ids, texts)]
        assert "records 4 puts 3" in lines
        (added,) = [line.split()[2] for line in lines if line.startswith("appended put ")]
        (deleted,) = [line.split()[2] for line in lines if line.startswith("appended delete ")]
        assert int(deleted) == ids[0]

        assert field.refresh() == 2
        assert field.get(int(added)).text == "written from C"
        assert ids[0] not in field
        assert field.ids() == [ids[1], int(added)]
    assert "verify segments 2 records 6 damages 0" in lines

    with chitta.open(root, embedder=None) as reopened:  # and a fresh replay agrees
        assert reopened.get(int(added)).text == "written from C"
        assert len(reopened) == 2


def test_c_program_refuses_a_path_that_is_not_a_field(example_exe: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(example_exe), str(tmp_path / "typo")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "CF_ENOTFOUND" in done.stderr and "create" in done.stderr
    assert not (tmp_path / "typo").exists()  # cf_open created nothing


def test_c_program_decodes_the_batches_python_writes(example_exe: Path, tmp_path: Path) -> None:
    """With an embedder, remember writes one atomic Batch (the put, its sparse code, the
    first time the embedder's settings); remember_many one Batch for all its puts."""
    from chitta.encode import HashingEmbedder

    root = tmp_path / "field"
    with chitta.open(root, embedder=HashingEmbedder(16)) as field:
        ids = [field.remember("first, embedded"), field.remember("second, embedded")]
        ids += field.remember_many(["third, in a group", "fourth, in the same group"])
        texts = [field.get(i).text for i in ids]
    kinds = {rec["op"] for rec in chitta.inspect.iter_records(root)}
    assert kinds == {"Batch"}  # every memory went into a Batch record
    lines = _run(example_exe, root)
    puts = [line.split(" ", 1)[1] for line in lines if line.startswith("put ")]
    assert puts == [f"{i}\t{t}" for i, t in zip(ids, texts)]


def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(Path(chitta.get_lib_dir()) / "libchitta_field.so"))
    lib.cf_last_error.restype = ctypes.c_char_p
    lib.cf_status_name.restype = ctypes.c_char_p
    lib.cf_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.cf_verify.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    lib.cf_append.argtypes = [
        ctypes.c_void_p, ctypes.c_uint8, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p
    ]  # fmt: skip
    return lib


def test_bad_arguments_are_codes_with_text_not_crashes(tmp_path: Path) -> None:
    lib = _lib()
    handle = ctypes.c_void_p()
    assert lib.cf_open(None, ctypes.byref(handle)) == CF_EINVAL
    assert b"path is NULL" in lib.cf_last_error()
    assert lib.cf_status_name(CF_EINVAL) == b"CF_EINVAL"
    assert lib.cf_open(str(tmp_path).encode(), None) == CF_EINVAL
    assert lib.cf_append(None, 0, b"x", 1, None) == CF_EINVAL
    assert (
        lib.cf_verify(str(tmp_path / "nowhere").encode(), ctypes.create_string_buffer(512))
        == CF_ENOTFOUND
    )
    assert lib.cf_abi_version() == 2  # 2: cf_open creates nothing
    assert not (tmp_path / "segments").exists()  # refused calls created nothing
