"""fsync group commit from native threads (the C API) side by side with
Python threads (``SegmentLog.append``), same payload, same thread counts.

A C, Rust or Go agent writes through ``libchitta_field`` (docs/C_API.md): its
appender threads take no GIL, so this measures the group commit itself, and the
Python rows in the same rounds show what the interpreter adds (RESULTS, "Segment
log"). The C program is compiled against the installed package, as
tests/unit/capi/test_capi.py does, and the records it wrote are read back and counted.

Smoke (CI): ``pytest benchmarks/bench_capi_fsync.py --benchmark-disable``.
Full run: ``CHITTA_BENCH_SYNC_N=100000 pytest benchmarks/bench_capi_fsync.py
--benchmark-min-rounds=3 --benchmark-warmup=off -s`` (thread counts:
``CHITTA_BENCH_CAPI_THREADS``, default ``16,64,256``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench_log import (
    PAYLOAD,
    PUT_CODE,
    SYNC_N,
    _fmt,
    _mt_log,
    _rate,
    _threaded,
    run_group,
    write_lines,
)

from chitta import _core
from chitta.field.native_paths import c_build_command

THREADS = [int(t) for t in os.environ.get("CHITTA_BENCH_CAPI_THREADS", "16,64,256").split(",")]

PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chitta/chitta_field.h"

static cf_field_t* field;
static unsigned char payload[4096];
static size_t payload_len;
static long per_thread;
static int op_type;

static void* work(void* arg) {
  (void)arg;
  for (long i = 0; i < per_thread; ++i) {
    uint64_t seq;
    if (cf_append(field, (uint8_t)op_type, payload, payload_len, &seq) != CF_OK) {
      fprintf(stderr, "cf_append: %s\n", cf_last_error());
      exit(2);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 6) return 1;
  const char* path = argv[1];
  int threads = atoi(argv[2]);
  long n = atol(argv[3]);
  op_type = atoi(argv[4]);
  FILE* pf = fopen(argv[5], "rb");
  if (!pf) return 1;
  payload_len = fread(payload, 1, sizeof payload, pf);
  fclose(pf);
  cf_options o;
  cf_options_init(&o);
  o.durability = CF_DURABILITY_FSYNC;
  o.create = 1;
  if (cf_open_ex(path, &o, &field) != CF_OK) {
    fprintf(stderr, "cf_open_ex: %s\n", cf_last_error());
    return 2;
  }
  per_thread = n / threads;
  pthread_t* pool = calloc((size_t)threads, sizeof(pthread_t));
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int t = 0; t < threads; ++t) pthread_create(&pool[t], NULL, work, NULL);
  for (int t = 0; t < threads; ++t) pthread_join(pool[t], NULL);
  if (cf_close_checked(field) != CF_OK) return 3;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.9f %ld\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
         per_thread * threads);
  free(pool);
  return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("capi-fsync")
    src, exe, payload = d / "fsync_appenders.c", d / "fsync_appenders", d / "payload.bin"
    src.write_text(PROGRAM)
    payload.write_bytes(PAYLOAD)
    cmd = c_build_command(src, exe, ["-std=c99", "-O2", "-Wall", "-Werror", "-pthread"])
    if cmd is None:
        pytest.skip("no C compiler found")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return exe, payload


def _records_in(root: str) -> int:
    log = _core.SegmentLog(root, read_only=True)
    try:
        return len(log.read_new())
    finally:
        log.close()


def _capi(exe: Path, payload: Path, threads: int, n: int) -> Callable[[str], float]:
    def fn(d: str) -> float:
        done = subprocess.run(
            [str(exe), d, str(threads), str(n), str(PUT_CODE), str(payload)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        seconds, written = done.stdout.split()
        assert _records_in(d) == int(written)  # every acknowledged record is in the log
        return float(seconds) * n / int(written)  # per-thread rounding: scale to n records

    return fn


@pytest.mark.parametrize("threads", THREADS)
def test_capi_fsync(benchmark: Any, program: tuple[Path, Path], threads: int) -> None:
    exe, payload = program
    n = max(SYNC_N, threads)
    run_group(
        benchmark,
        [
            (
                f"capi/fsync/{threads}",
                n,
                _capi(exe, payload, threads, n),
                {
                    "what": "cf_append from C threads, CF_DURABILITY_FSYNC",
                    "threads": threads,
                    "payload_bytes": len(PAYLOAD),
                },
            ),
            (
                f"py/fsync/{threads}",
                n,
                _threaded(threads, n, _mt_log(f"py/fsync/{threads}")),
                {
                    "what": "SegmentLog.append from Python threads, durability=fsync",
                    "threads": threads,
                },
            ),
        ],
    )


@pytest.fixture(scope="module", autouse=True)
def _print_summary(request: Any) -> Any:
    yield
    rows = []
    for t in THREADS:
        c, p = _rate(f"capi/fsync/{t}"), _rate(f"py/fsync/{t}")
        if c is not None:
            rows.append(
                f"| {t} | {_fmt(c)} | {_fmt(p)} | {c / p:.2f}x |"
                if p
                else f"| {t} | {_fmt(c)} | - | - |"
            )
    if not rows:
        return
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"fsync group commit, C API vs Python threads (SYNC_N={SYNC_N:,}; load average {load})",
        "",
        "| threads | C API (cf_append) | Python (SegmentLog.append) | C / Python |",
        "|---|---|---|---|",
        *rows,
    ]
    write_lines(request, lines)
