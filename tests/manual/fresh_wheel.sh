#!/usr/bin/env bash
# Issue 14's "nothing preinstalled" check, by hand (heavy: GBs of packing; not part of `make test`).
# Builds tfyarn's wheel, installs it (not editable) with one framework into a fresh venv, then runs
# that framework's example with its own submit.sh -- default settings, no extra flag -- from a mount
# namespace where the venv sits in a dir that is empty for every NodeManager (node 1 sees the host's
# view, node 2 its own /tmp), as a real cluster's nodes lack the submitter's venv.
# Usage: bash tests/manual/fresh_wheel.sh tensorflow|pytorch   (the local cluster up: `make up NODES=2`)
set -euo pipefail
framework=${1:?tensorflow or pytorch}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${FRESH_WHEEL_DIR:-$HOME/.cache/tfyarn/fresh-wheel}
py=${PYTHON:-$root/.venv/bin/python}
case $framework in
  tensorflow) extra=tensorflow; example=examples/tensorflow/ps_strategy ;;
  pytorch) extra=pytorch; example=examples/pytorch/ddp ;;
  *) echo "usage: $0 tensorflow|pytorch" >&2; exit 2 ;;
esac
rm -rf "$work/wheel" "$work/venv-$framework" "$work/hidden"
mkdir -p "$work/wheel" "$work/hidden"
t0=$(date +%s)
"$py" -m pip wheel --quiet --no-deps -w "$work/wheel" "$root"
"$(command -v python3.11 || echo "$py")" -m venv "$work/venv-$framework"
"$work/venv-$framework/bin/pip" install --quiet "$(ls "$work"/wheel/tfyarn-*.whl)[$extra]"
echo "fresh venv with the wheel and $extra: $(( $(date +%s) - t0 )) s, $(du -sh "$work/venv-$framework" | cut -f1)"
export HADOOP_CONF_DIR=${HADOOP_CONF_DIR:-$HOME/.tfyarn/cluster/conf}
t0=$(date +%s)
unshare --mount --propagation private -- bash -c '
  set -euo pipefail
  mount --bind "$1" "$2"
  TFYARN="$2/bin/python -m tfyarn" bash "$3/$4/submit.sh" --epochs 1
' sh "$work/venv-$framework" "$work/hidden" "$root" "$example"
echo "submit --wait of $example from the hidden venv: $(( $(date +%s) - t0 )) s"
test -z "$(ls -A "$work/hidden")"  # outside the namespace the venv was never there
