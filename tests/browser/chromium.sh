#!/usr/bin/env bash
# Debian's Chromium as the browser tests and benches start it (Playwright's
# executablePath, from tests/browser/browser.mjs): the arguments passed on,
# with every --disable-features switch merged into one and every
# --enable-features switch into another. Chromium keeps only the last of
# each, and Playwright puts a list of its own before the caller's arguments,
# so the tests' list (CHROMIUM_ARGS) would otherwise replace Playwright's.
set -euo pipefail
passed=()
disabled=()
enabled=()
for arg in "$@"; do
  case "$arg" in
    --disable-features=*) disabled+=("${arg#*=}") ;;
    --enable-features=*) enabled+=("${arg#*=}") ;;
    *) passed+=("$arg") ;;
  esac
done
joined() { local IFS=,; echo "$*"; }
if ((${#disabled[@]} > 0)); then passed+=("--disable-features=$(joined "${disabled[@]}")"); fi
if ((${#enabled[@]} > 0)); then passed+=("--enable-features=$(joined "${enabled[@]}")"); fi
exec /usr/bin/chromium "${passed[@]}"
