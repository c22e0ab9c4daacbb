#!/usr/bin/env bash
# The Python package's tests, as on a clean machine: a fresh virtual
# environment, the documented install command (`pip install ./python`,
# which compiles the extension with maturin), then pytest on python/tests.
# The tests compare the package with the command line, so the release
# binary is built first (already there after `cargo test --release`); they
# build their own small table set (levels 0..16) in a temporary directory.
#   scripts/python-test.sh              # VENV=DIR to keep the environment
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${VENV:-} ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  VENV=$tmp/venv
fi
cargo build --release --quiet
python3 -m venv "$VENV"
# `pip install ./python` needs pip 21.3 or later (it builds in the tree; an
# older one builds a copy of python/ without the crate at `..`), and a venv
# brings the pip of its Python, which may be older (upgraded only then).
"$VENV/bin/python" -m pip install --quiet 'pip>=21.3'
# mypy for its stubtest: the native module's stub must match the module
# (a version fixed, so that a new one cannot turn CI red on its own).
"$VENV/bin/pip" install --quiet ./python pytest 'mypy==2.4.1'
# From the root, so that `import mancaladb` is the installed package, not
# the sources under python/.
"$VENV/bin/pytest" -q python/tests
