#!/usr/bin/env bash
# Installs the pinned peers the interop tests talk to: the official Python SDK (PyPI `mcp`,
# version in tests-interop/python/requirements.txt) into target/interop-venv. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/interop-venv"
req="$root/tests-interop/python/requirements.txt"
stamp="$venv/.installed-$(sha256sum "$req" | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  touch "$stamp"
fi
