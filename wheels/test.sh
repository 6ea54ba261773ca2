#!/usr/bin/env bash
# Install each repaired wheel in $OUT (default dist) into a fresh virtual environment of its
# own interpreter, with nothing of the checkout, and run `chitta demo`, an import check and a
# test subset from outside the tree against that installation. See wheels/README.md.
#   OUT=/tmp/wheels wheels/test.sh [TESTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
. wheels/pythons.sh
root=$PWD
out=${OUT:-dist}
tests=("$@")
[ "${#tests[@]}" -gt 0 ] || tests=(tests/format tests/unit/capi tests/unit/field/test_field.py tests/unit/ops)
tested=0
for wheel in "$out"/chitta-*manylinux*.whl; do
  tag=$(basename "$wheel" | cut -d- -f3)  # cp312
  name="python${tag:2:1}.${tag:3}"
  py=$(resolve "$name")
  [ -n "$py" ] || { echo "no $name for $(basename "$wheel")"; exit 1; }
  venv=$(mktemp -d)/venv
  echo "=== $(basename "$wheel") in a fresh $name venv"
  "$py" -m venv "$venv"
  "$venv/bin/pip" install -q --prefer-binary "$wheel" pytest hypothesis psutil </dev/null
  (
    cd /tmp
    CHITTA_EMBEDDER=none "$venv/bin/chitta" demo --path "$(mktemp -d)/demo" >/dev/null
    "$venv/bin/python" -c "import chitta, pathlib, sys; assert '$venv/' in chitta.__file__; assert (pathlib.Path(chitta.get_include()) / 'chitta' / 'chitta_field.h').is_file(); print(sys.version.split()[0], chitta.__file__)"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" --rootdir "$root" -c "$root/pyproject.toml" "${tests[@]/#/$root/}"
  )
  rm -rf "$(dirname "$venv")"
  tested=$((tested + 1))
done
[ "$tested" -gt 0 ] || { echo "no wheel in $out"; exit 1; }
