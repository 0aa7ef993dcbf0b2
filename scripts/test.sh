#!/usr/bin/env bash
# npm test: installs what a fresh machine lacks (scripts/ensure-deps.sh test),
# builds native + WASM, runs every suite (native doctest via ctest, the WASM
# module and the JS under Node, the libFuzzer targets briefly, the browser
# tests in headless Chromium), and prints each stage's time at the end, also
# when a stage fails. A failed build stops the run; a failed suite does not
# stop the suites after it, and the run exits non-zero.
# Usage: scripts/test.sh [STAGE...]   (default: every stage, in this order)
#   deps native wasm ctest node fuzz browser
# The stages run one after the other: each keeps both cores of the 2-core
# machine busy, and overlapping two (the fuzz build beside the browser suite,
# the test packages' install beside the native build) only moved the time
# from one to the other.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(deps native wasm ctest node fuzz browser)
declare -A title=([deps]="apt/npm" [native]="native build" [wasm]="WASM build" [ctest]="ctest"
                  [node]="Node" [fuzz]="fuzz" [browser]="browser")
wanted=("$@")
((${#wanted[@]} > 0)) || wanted=("${all[@]}")
for name in "${wanted[@]}"; do
  [[ -n "${title[$name]:-}" ]] || { echo "usage: scripts/test.sh [${all[*]}]" >&2; exit 2; }
done

run_stage() {
  case "$1" in
    deps) bash scripts/ensure-deps.sh test ;;
    native) bash scripts/build.sh native ;;
    wasm) bash scripts/build.sh wasm ;;
    ctest) ctest --test-dir build/native --output-on-failure -j "$(nproc)" ;;
    # Two test files at a time (Node's default is one fewer than the cores),
    # the browser suite too (on 2 cores: 231 s against 276 s one at a time).
    node) node --test --test-concurrency=2 tests/node/ ;;
    fuzz) bash scripts/fuzz.sh 5 ;;
    browser) node --test --test-concurrency=2 tests/browser/ ;;
  esac
}

report=()
failed=()
started="$(date +%s)"
print_report() {
  echo
  echo "== stage times =="
  printf '%s\n' "${report[@]}"
  printf '%-14s %4d s\n' "total" "$(($(date +%s) - started))"
}
trap print_report EXIT

for name in "${wanted[@]}"; do
  echo "== ${title[$name]} =="
  begin="$(date +%s)"
  status=ok
  run_stage "$name" || status=FAILED
  report+=("$(printf '%-14s %4d s  %s' "${title[$name]}" "$(($(date +%s) - begin))" "$status")")
  if [[ "$status" != ok ]]; then
    failed+=("${title[$name]}")
    case "$name" in deps | native | wasm) exit 1 ;; esac
  fi
done
if ((${#failed[@]} > 0)); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
