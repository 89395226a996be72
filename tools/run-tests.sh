#!/bin/sh
# Installs missing packages, builds, and runs every test suite twice: in
# the release build users run (-O3, NDEBUG: tools/run-demo.sh builds one),
# and under AddressSanitizer + UndefinedBehaviorSanitizer with assertions
# on (-O1). Ends with one line "N passed, N failed". A third run in the
# optimised build with assertions (debugoptimized, the developers' `build`)
# is `DVI_TESTS_DEBUGOPT=1 sh tools/run-tests.sh` (all three took 21 min on
# 2 cores; the sanitizer run checks the assertions as well).
set -e
cd "$(dirname "$0")/.."
sh tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
run_suite() { # builddir, extra meson options...
    dir=$1
    shift
    if [ ! -d "$dir" ]; then meson setup "$dir" "$@" >/dev/null; fi
    ninja -C "$dir" >/dev/null
    set +e
    meson test -C "$dir" --num-processes "$jobs" --print-errorlogs > "$dir/test-summary.txt" 2>&1
    set -e
    cat "$dir/test-summary.txt"
    ok=$(awk '/^Ok:/ {print $2}' "$dir/test-summary.txt")
    bad=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $NF} END {print s + 0}' "$dir/test-summary.txt")
    passed=$((passed + ${ok:-0}))
    failed=$((failed + ${bad:-0}))
    [ -n "$ok" ] || failed=$((failed + 1))
}
if [ "${DVI_TESTS_DEBUGOPT:-0}" = 1 ]; then run_suite build -Dbuildtype=debugoptimized; fi
# the release build: numerics that depend on the optimiser show here
run_suite build-release-tests -Dbuildtype=release -Dtests=true
# -O1, as AddressSanitizer recommends: about three times faster than -O0
run_suite build-asan -Dbuildtype=debug -Doptimization=1 -Db_sanitize=address,undefined -Db_lundef=false
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
