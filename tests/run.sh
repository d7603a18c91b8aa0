#!/usr/bin/env bash
# The project's test command (README): installs what the tests need on a fresh machine, then runs every test.
#
# Tests that drive real engines (ALFWorld through TextWorld, ScienceWorld's jar, HF transformers for checkpoint
# parity) need Python packages: this script installs tests/requirements.txt into a virtual environment of its own
# (ACT_VENV, default ~/.cache/act-rs/venv), points ACT_PYTHON at it and sets ACT_REQUIRE_EXTERNAL=1, so a missing
# engine fails the run instead of being skipped. ACT_SKIP_PIP=1 uses ACT_PYTHON (or python3) as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${ACT_SKIP_PIP:-0}" != "1" ]; then
  venv="${ACT_VENV:-$HOME/.cache/act-rs/venv}"
  if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv"
    python3 -m venv "$venv"
  fi
  echo "== pip install -r tests/requirements.txt (into $venv)"
  t0=$(date +%s)
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
  echo "   pip took $(( $(date +%s) - t0 )) s"
  export ACT_PYTHON="$venv/bin/python"
fi
export ACT_PYTHON="${ACT_PYTHON:-python3}"
export ACT_REQUIRE_EXTERNAL="${ACT_REQUIRE_EXTERNAL:-1}"

echo "== cargo test --workspace"
cargo test --workspace
