#!/usr/bin/env bash
# Runs every test suite against the current builds (npm test builds first):
# native doctest suites via ctest, the WASM module and the JS under Node,
# the libFuzzer targets briefly, and the browser tests in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== native (ctest) =="
ctest --test-dir build/native --output-on-failure

echo "== WASM and JS under Node =="
# Two test files at a time (Node's default is one fewer than the cores: one
# here). The browser suite stays one file at a time: it times page work.
node --test --test-concurrency=2 tests/node/

echo "== fuzzing: safetensors, sharded checkpoint index, config/model, tokenizer.json and SentencePiece .model parsers (libFuzzer, ASan + UBSan) =="
bash scripts/fuzz.sh 5

echo "== browser (headless Chromium) =="
node --test tests/browser/
