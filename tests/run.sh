#!/usr/bin/env bash
# The project's test command (README): installs what the tests need on a fresh machine, then runs every test.
#
# Tests that drive real engines (ALFWorld through TextWorld, ScienceWorld's jar, HF transformers for checkpoint
# parity) need Python packages; this script installs them with pip and sets ACT_REQUIRE_EXTERNAL=1, so a missing
# engine fails the run instead of being skipped. Set ACT_SKIP_PIP=1 to use what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${ACT_PYTHON:-python3}"
export ACT_PYTHON="$PYTHON"
if [ "${ACT_SKIP_PIP:-0}" != "1" ] && [ -s tests/requirements.txt ]; then
  echo "== pip install -r tests/requirements.txt"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
fi
export ACT_REQUIRE_EXTERNAL="${ACT_REQUIRE_EXTERNAL:-1}"

echo "== cargo test --workspace"
cargo test --workspace
