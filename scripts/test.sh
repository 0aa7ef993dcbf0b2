#!/usr/bin/env bash
# npm test: installs what a fresh machine lacks (scripts/ensure-deps.sh test),
# builds native + WASM, runs every suite (native doctest via ctest, the WASM
# module and the JS under Node, the libFuzzer targets briefly, the browser
# tests in headless Chromium), and prints each stage's time at the end, also
# when a stage fails. A failed build stops the run; a failed suite does not
# stop the suites after it, and the run exits non-zero.
# Usage: scripts/test.sh [STAGE...]   (default: every stage, in this order)
#   deps native wasm ctest node fuzz browser
# The stages run one after the other, each keeping both cores of the 2-core
# machine busy (overlapping two, the fuzz build beside the browser suite, only
# moved the time from one to the other), except apt/npm: dpkg keeps one core
# busy, so the native build starts once its own packages are in (the native
# profile), at the lowest priority, on the core dpkg leaves idle, and the
# native stage waits for it.
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

# The native build begun during apt/npm: its pid and its log, printed when
# the native stage has waited for it.
native_build=""
native_log="$(mktemp)"
start_native_build() {
  nice -n 19 bash scripts/build.sh native >"$native_log" 2>&1 &
  native_build=$!
}
finish_native_build() {
  local status=0
  wait "$native_build" || status=$?
  cat "$native_log"
  return "$status"
}

run_stage() {
  case "$1" in
    deps)
      if [[ " ${wanted[*]} " == *" native "* ]]; then
        bash scripts/ensure-deps.sh native && start_native_build
      fi
      bash scripts/ensure-deps.sh test ;;
    native) if [[ -n "$native_build" ]]; then finish_native_build; else bash scripts/build.sh native; fi ;;
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
# On the way out (a failed install too), the native build begun in the background is waited for, not left running.
trap '[[ -z "$native_build" ]] || wait "$native_build" 2>/dev/null || true; print_report; rm -f "$native_log"' EXIT

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
