# Sourced by build.sh and test.sh. `resolve python3.X` prints an interpreter of that name that
# runs: the one on PATH, else pyenv's installed version (pyenv puts a shim for every version on
# PATH, and a shim fails when its version is not selected); nothing when there is none.
resolve() {
  if "$1" -c pass 2>/dev/null; then command -v "$1"; return; fi
  local v=${1#python} root=${PYENV_ROOT:-$HOME/.pyenv} cand
  for cand in "$root"/versions/"$v".*/bin/"$1"; do
    if [ -x "$cand" ] && "$cand" -c pass 2>/dev/null; then echo "$cand"; return; fi
  done
}
