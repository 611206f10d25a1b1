#!/usr/bin/env bash
# Arize Phoenix for the tracing tests, in a virtual environment of its own (it brings its own
# versions of many packages; the project only needs the OpenTelemetry SDK to talk to it).
# Prints the `phoenix` executable. Each test starts its server on a free port in a fresh folder.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x phoenix/venv/bin/phoenix ]; then
  python3 -m venv phoenix/venv
  phoenix/venv/bin/pip install --quiet --upgrade pip
  phoenix/venv/bin/pip install --quiet 'arize-phoenix==20.26.1'
fi
echo "$PWD/phoenix/venv/bin/phoenix"
