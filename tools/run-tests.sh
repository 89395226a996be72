#!/bin/sh
# Installs missing packages, builds, and runs the test suites. Ends with one
# line "N passed, N failed" and a non-zero status when anything failed; a
# failing build or test prints its own output.
#
#   sh tools/run-tests.sh              every suite twice: in the release build
#                                      users run (-O3, NDEBUG) and under
#                                      AddressSanitizer + UBSan with assertions
#                                      on (-O1); the README's test command
#   sh tools/run-tests.sh --quick      the release build's suites only
#   sh tools/run-tests.sh --full       both, and a third run in the optimised
#                                      build with assertions (debugoptimized,
#                                      the developers' `build`)
#   sh tools/run-tests.sh --blas-matrix
#                                      the suites whose numbers go through
#                                      BLAS/LAPACK (Lemke, FCLIB, Coulomb,
#                                      Newton, the world) under several
#                                      OpenBLAS CPU kernels and thread counts,
#                                      in the release build
#
# Times measured on 2 cores are in README.md.
set -e
cd "$(dirname "$0")/.."
mode=${1:---default}
case "$mode" in
--default | --quick | --full | --blas-matrix) ;;
-h | --help)
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "run-tests.sh: unknown option '$mode' (--quick, --full, --blas-matrix, --help)" >&2
    exit 2
    ;;
esac
sh tools/deps.sh --tests
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0

# build DIR [meson options...]: configure once and build; on failure, show why
build() {
    dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        rm -rf "$dir"
        setup_log=$(mktemp)
        if ! meson setup "$dir" "$@" >"$setup_log" 2>&1; then
            cat "$setup_log" >&2
            rm -f "$setup_log"
            echo "run-tests.sh: 'meson setup $dir $*' failed (above; the log is $dir/meson-logs/meson-log.txt)" >&2
            exit 1
        fi
        mv "$setup_log" "$dir/setup.log"
    fi
    if ! ninja -C "$dir" >"$dir/build.log" 2>&1; then
        grep -v '^\[[0-9]*/[0-9]*\] ' "$dir/build.log" | tail -60 >&2
        echo "run-tests.sh: 'ninja -C $dir' failed (above; the whole output is $dir/build.log)" >&2
        exit 1
    fi
}

run_suite() { # builddir, extra meson options...
    dir=$1
    build "$@"
    set +e
    meson test -C "$dir" --num-processes "$jobs" --print-errorlogs >"$dir/test-summary.txt" 2>&1
    set -e
    cat "$dir/test-summary.txt"
    ok=$(awk '/^Ok:/ {print $2}' "$dir/test-summary.txt")
    bad=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $NF} END {print s + 0}' "$dir/test-summary.txt")
    passed=$((passed + ${ok:-0}))
    failed=$((failed + ${bad:-0}))
    [ -n "$ok" ] || failed=$((failed + 1))
}

# One suite binary with the environment tests/meson.build gives it, but for
# the BLAS settings given; its output is shown when it fails.
run_binary() { # builddir, suite, label, env assignments...
    dir=$1
    name=$2
    label=$3
    shift 3
    log="$dir/blas-matrix/$name.$(echo "$label" | tr ' =' '_-').log"
    if env DVI_SOURCE_DIR="$(pwd)" DVI_BUILD_DIR="$(pwd)/$dir" CMOCKA_MESSAGE_OUTPUT=stdout \
        OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1 "$@" \
        timeout 900 "$dir/tests/$name" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "ok    $name ($label)"
    else
        failed=$((failed + 1))
        echo "FAIL  $name ($label): $log"
        tail -40 "$log"
    fi
}

if [ "$mode" = --blas-matrix ]; then
    dir=build-release-tests
    build "$dir" -Dbuildtype=release -Dtests=true
    mkdir -p "$dir/blas-matrix"
    suites="test_lemke test_coulomb test_newton test_fclib test_world"
    # the CPU kernels OpenBLAS may pick on x86-64 (a kernel this CPU cannot
    # run falls back, in OpenBLAS, to one it can)
    for core in Prescott Haswell SkylakeX Zen; do
        for s in $suites; do run_binary "$dir" "$s" "OPENBLAS_CORETYPE=$core" OPENBLAS_CORETYPE="$core"; done
    done
    for n in 2 8; do
        for s in $suites; do run_binary "$dir" "$s" "OPENBLAS_NUM_THREADS=$n" OPENBLAS_NUM_THREADS="$n"; done
    done
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

if [ "$mode" = --full ]; then run_suite build -Dbuildtype=debugoptimized; fi
# the release build: numerics that depend on the optimiser show here
run_suite build-release-tests -Dbuildtype=release -Dtests=true
if [ "$mode" != --quick ]; then
    # -O1, as AddressSanitizer recommends: about three times faster than -O0
    run_suite build-asan -Dbuildtype=debug -Doptimization=1 -Db_sanitize=address,undefined -Db_lundef=false
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
