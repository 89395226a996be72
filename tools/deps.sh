#!/bin/sh
# Installs the Debian 12 packages dvicontact needs to build, run and test,
# those that are missing, and says which and why. Does nothing when all are
# present. Run as root (or with sudo available).
#
# Optional, and not installed here: libsiconos-numerics-dev (bench_fclib's
# reference solvers; meson option -Dsiconos). Every optional dependency is a
# meson feature that a build without it skips (meson_options.txt).
set -e
# package: what needs it
WHY='meson:the build system
ninja-build:the build system
pkg-config:finds the libraries at build time
gcc:the C11 compiler
libc6-dev:the C library headers
python3:meson, the documentation checks and test_study
libopenblas0-serial:the BLAS/LAPACK the library loads for CHOLMOD, without threads (meson -Dblas)
liblapacke-dev:LAPACK for the reference computations of the tests
libsuitesparse-dev:CHOLMOD (the joint rows eliminated by a sparse Cholesky)
libcjson-dev:scene files, CCP files, summary.json
libhdf5-dev:FCLIB problem files
libcmocka-dev:the test suites
libfclib-dev:optional: the libfclib cross-check of test_fclib
zlib1g-dev:optional: compressed VTK frames'
if [ "${1:-}" = --tests ]; then
    WHY="$WHY
python3-dev:the Python package dvicontact (python/)
python3-numpy:the Python package dvicontact (its arrays)
python3-scipy:the tests of the Python package (sparse matrices)
python3-pytest:the tests of the Python package
python3-pandas:the tests of the Python package (the DataFrame results)
libopenmpi-dev:MPI: scenes spread over ranks (src/dist, test_mpi, bench_mpi; meson -Dmpi)
openmpi-bin:mpirun, which test_mpi runs the ranks with
openssh-client:the launcher of mpirun looks for ssh even on one machine"
elif [ -n "${1:-}" ]; then
    echo "tools/deps.sh: unknown option '$1' (--tests)" >&2
    exit 2
fi
echo "$WHY" | {
    while IFS=: read -r p why; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p:$why"
    done
} >"${TMPDIR:-/tmp}/dvi-deps.$$"
missing=$(cut -d: -f1 "${TMPDIR:-/tmp}/dvi-deps.$$" | tr '\n' ' ')
if [ -z "$missing" ]; then
    rm -f "${TMPDIR:-/tmp}/dvi-deps.$$"
    exit 0
fi
echo "tools/deps.sh: installing the missing Debian packages:"
sed 's/^\([^:]*\):\(.*\)$/  \1 (\2)/' "${TMPDIR:-/tmp}/dvi-deps.$$"
rm -f "${TMPDIR:-/tmp}/dvi-deps.$$"
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "tools/deps.sh: error: missing packages: $missing(run as root, or install them)" >&2
    exit 1
fi
log=$(mktemp)
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 ||
    ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >>"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "tools/deps.sh: error: apt-get could not install: $missing(its output is above)" >&2
    exit 1
fi
rm -f "$log"
echo "tools/deps.sh: installed."
