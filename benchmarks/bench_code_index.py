"""The code indexer on this repository's own ``chitta/`` sources (issue 19 targets).

Reports: files, symbols, call edges and seconds of a first index; seconds of a
re-index with nothing changed and after a one-line edit of one file (on a copy
of the tree, so the checkout is untouched); and how many of the ``def`` /
``class`` statements Python's ``ast`` finds the indexer found too (qualified
names, nested ones included).

    python benchmarks/bench_code_index.py [SOURCE_DIR]
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
import time
from pathlib import Path

import chitta
from chitta.policies.code_index import index_code


def ast_names(root: Path) -> set[str]:
    """``path#Qualified.name`` of every def / class under ``root`` (the oracle)."""
    out: set[str] = set()

    def walk(node: ast.AST, scope: list[str], rel: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = [*scope, child.name]
                out.add(f"{rel}#{'.'.join(q)}")
                walk(child, q, rel)
            else:
                walk(child, scope, rel)

    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        walk(ast.parse(path.read_bytes()), [], rel)
    return out


def main(src: Path) -> None:
    with tempfile.TemporaryDirectory() as d:
        tree = Path(d, "src")
        shutil.copytree(src, tree, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        with chitta.open(Path(d, "field"), embedder=None) as f:
            t0 = time.perf_counter()
            first = index_code(f._core, tree, "self")
            t1 = time.perf_counter()
            again = index_code(f._core, tree, "self")
            t2 = time.perf_counter()
            target = tree / "field" / "write.py"  # a line inserted mid-file: later spans shift
            lines = target.read_text().splitlines(keepends=True)
            target.write_text("".join([*lines[:60], "# one more line\n", *lines[60:]]))
            edited = index_code(f._core, tree, "self")
            t3 = time.perf_counter()
            symbols = f._core.registry.by_name["symbols"]
            found = set(symbols.symbols)  # type: ignore[attr-defined]
        oracle = ast_names(tree)
        hit = len(oracle & found)
        print(
            f"first index: {first.files_changed} files, {first.symbols_total} symbols, "
            f"{first.edges_total} call edges in {t1 - t0:.2f} s"
        )
        print(f"re-index, nothing changed: {again.files_changed} files parsed in {t2 - t1:.2f} s")
        print(
            f"re-index after a one-line edit: {edited.files_changed} file parsed, "
            f"{edited.symbols_upserted} symbols upserted in {t3 - t2:.2f} s"
        )
        print(
            f"ast oracle: {hit} of {len(oracle)} def/class found ({100 * hit / len(oracle):.2f}%)"
        )
        for name in sorted(oracle - found)[:10]:
            print("  missed", name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "chitta")
