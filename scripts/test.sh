#!/usr/bin/env bash
# npm test: installs what a fresh machine lacks (scripts/ensure-deps.sh),
# builds native + WASM, runs every suite (native doctest via ctest, the WASM
# module and the JS under Node, the libFuzzer targets briefly, the browser
# tests in headless Chromium), and prints each stage's time at the end, also
# when a stage fails. A failed build stops the run; a failed suite does not
# stop the suites after it, and the run exits non-zero.
# Usage: scripts/test.sh [STAGE...]   (default: every stage, in this order)
#   deps native wasm ctest node browser fuzz
# Two waits overlap work, on a 2-core machine where every other stage keeps
# both cores busy: the test-only Debian packages (Chromium, clang, Jupyter)
# install while the native build runs, and the fuzz targets build (at low
# priority) while the browser suite runs; the fuzzing itself runs after it,
# with the cores to itself.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(deps native wasm ctest node browser fuzz)
declare -A title=([deps]="apt/npm" [native]="native build" [wasm]="WASM build" [ctest]="ctest"
                  [node]="Node" [browser]="browser" [fuzz]="fuzz")
wanted=("$@")
((${#wanted[@]} > 0)) || wanted=("${all[@]}")
for name in "${wanted[@]}"; do
  [[ -n "${title[$name]:-}" ]] || { echo "usage: scripts/test.sh [${all[*]}]" >&2; exit 2; }
done
mkdir -p build

report=()
failed=()
started="$(date +%s)"
print_report() {
  echo
  echo "== stage times =="
  printf '%s\n' "${report[@]}"
  printf '%-34s %4d s\n' "total" "$(($(date +%s) - started))"
}
trap print_report EXIT
record() { # title, seconds, status
  report+=("$(printf '%-34s %4d s  %s' "$1" "$2" "$3")")
  [[ "$3" == ok ]] || failed+=("$1")
}

# A job in the background: its pid, start time and log, then its wait.
background() { # name, log, command...
  local name="$1" log="$2"
  shift 2
  declare -g "${name}_begin=$(date +%s)" "${name}_log=$log"
  "$@" >"$log" 2>&1 &
  declare -g "${name}_pid=$!"
}
finish() { # name, title
  local pid_var="$1_pid" begin_var="$1_begin" log_var="$1_log" status=ok
  [[ -n "${!pid_var:-}" ]] || return 0
  wait "${!pid_var}" || status=FAILED
  cat "${!log_var}"
  record "$2" "$(($(date +%s) - ${!begin_var}))" "$status"
  declare -g "$1_pid="
  [[ "$status" == ok ]]
}

run_stage() {
  case "$1" in
    deps)
      bash scripts/ensure-deps.sh build &&
        background test_packages build/ensure-deps-test.log bash scripts/ensure-deps.sh test ;;
    native) bash scripts/build.sh native ;;
    wasm) bash scripts/build.sh wasm ;;
    ctest) ctest --test-dir build/native --output-on-failure -j "$(nproc)" ;;
    # Two test files at a time (Node's default is one fewer than the cores).
    node) node --test --test-concurrency=2 tests/node/ ;;
    browser)
      [[ " ${wanted[*]} " == *" fuzz "* ]] && background fuzz_build build/fuzz-build.log nice -n 10 bash scripts/fuzz.sh --build-only
      node --test tests/browser/ ;;
    fuzz)
      finish fuzz_build "fuzz build (beside the browser)" || return 1
      bash scripts/fuzz.sh 5 ;;
  esac
}

for name in "${wanted[@]}"; do
  # The suites need the test packages, which installed during the builds.
  if [[ "$name" != deps && "$name" != native && "$name" != wasm ]]; then
    finish test_packages "apt (test packages, beside the builds)" || exit 1
  fi
  echo "== ${title[$name]} =="
  begin="$(date +%s)"
  status=ok
  run_stage "$name" || status=FAILED
  record "${title[$name]}" "$(($(date +%s) - begin))" "$status"
  if [[ "$status" != ok ]]; then
    case "$name" in deps | native | wasm) exit 1 ;; esac
  fi
done
finish test_packages "apt (test packages, beside the builds)" || exit 1
if ((${#failed[@]} > 0)); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
