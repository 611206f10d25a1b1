#!/usr/bin/env bash
# Regenerates the Dagster UI screenshots of docs/ from the current UI: the browser tests that take
# them (rag_eval_pipeline_tests/ui/, slow: `rag-eval ui` and Debian's chromium) write
# test-artifacts/<name>.png, and each image docs/ shows under that name is replaced by it; and
# docs/report.png, the first screen of the evaluation report at 1,440 x 900, from the report test.
# test_docs.py holds that every docs/ui-*.png is one a test takes.
#   bash docs/screenshots.sh [pytest arguments, e.g. -k broken_model]
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest -p no:cacheprovider -q rag_eval_pipeline_tests/ui "$@"
.venv/bin/python -m pytest -p no:cacheprovider -q \
  rag_eval_pipeline_tests/test_report_and_monitoring.py::test_report_renders_offline_and_the_table_filters
cp test-artifacts/report.png docs/report.png
for image in docs/ui-*.png; do
  fresh="test-artifacts/$(basename "$image")"
  if [ -f "$fresh" ]; then cp "$fresh" "$image"; else echo "not taken in this run: $image"; fi
done
