#!/usr/bin/env bash
# Install the QuickJS bindings that bench/engine_compare.py compares, each in a folder of its own under
# bench/.engines/ (git-ignored): both provide the same `_quickjs` module, so they cannot share one environment.
# Override the versions with QUICKJS_SPEC and QUICKJS_NG_SPEC.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-$here/../.venv/bin/python}"
for pair in "quickjs=${QUICKJS_SPEC:-quickjs==1.19.4}" "quickjs-ng=${QUICKJS_NG_SPEC:-quickjs-ng==0.17.0.2}"; do
    name="${pair%%=*}"
    spec="${pair#*=}"
    rm -rf "$here/.engines/$name"
    "$python" -m pip install --quiet --no-deps --target "$here/.engines/$name" "$spec"
    echo "$spec in bench/.engines/$name"
done
