#!/bin/sh
# dvicontact — install test.
#
# Usage: test_install.sh SOURCE_ROOT BUILD_ROOT
#
# Installs the build tree into a temporary staging directory (DESTDIR), then
# checks what a user of the installed copy relies on:
#   - the shared library with its versioned SONAME chain
#     libdvicontact.so -> libdvicontact.so.0 -> libdvicontact.so.0.1.0,
#     SONAME libdvicontact.so.0, public symbols exported, internals hidden;
#   - the headers dvi/base.h, dvi/ccp.h, dvi/dvi.h, each compiling on its own;
#   - the pkg-config file dvicontact.pc, relocatable (its prefix is found from
#     its own place), so that it works from the staging directory as it is;
#   - the data: every scene of examples/scenes in share/dvicontact/scenes, the
#     scene schema, the rover model, the guides in share/doc/dvicontact;
#   - the installed `dvi`, run with LD_LIBRARY_PATH unset (its RUNPATH,
#     relative to its own place, finds the staged library): `dvi --help` names
#     the installed data directory, and `dvi check` accepts an installed scene;
#   - the descriptions of the .pc files name no solver, or every solver
#     `dvi solve --all-solvers` runs (so that a new solver cannot leave them
#     stale);
#   - no installed file carries a path of the source or build tree;
#   - the Python package (when built): imported from the staging directory
#     with LD_LIBRARY_PATH unset, solving a problem with a closed-form answer;
# and finally compiles examples/embed_solver.c with
#   cc embed_solver.c $(pkg-config --cflags --libs dvicontact-ccp)
# (the solver layer alone, whose library needs only libc, libm, OpenMP and
# BLAS/LAPACK), and a program that writes files through <dvi/output.h>,
# against the staged copy only and runs it. Exit 0 on success; otherwise a message
# on stderr and a non-zero status. The staging directory is always removed.
set -eu

if [ "$#" -ne 2 ]; then
    echo "usage: $0 SOURCE_ROOT BUILD_ROOT" >&2
    exit 2
fi
src=$1
build=$2
CC=${CC:-cc}

fail() {
    echo "test_install: FAIL: $*" >&2
    exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvi-install-test.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

stage=$tmp/stage

# --- 1. install -----------------------------------------------------------
if ! meson install -C "$build" --destdir "$stage" --no-rebuild >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log" >&2
    fail "meson install into $stage failed"
fi

# --- 2. the pkg-config file -------------------------------------------------
pcfile=$(find "$stage" -name dvicontact.pc -type f | head -n 1)
[ -n "$pcfile" ] || fail "dvicontact.pc was not installed"
pcdir=$(dirname "$pcfile")
grep -q '^Name: *dvicontact' "$pcfile" || fail "dvicontact.pc has no 'Name: dvicontact'"
grep -q '^Version: *0\.1\.0' "$pcfile" || fail "dvicontact.pc does not say Version: 0.1.0"
grep -q '^Libs:.*-ldvicontact' "$pcfile" || fail "dvicontact.pc Libs does not link -ldvicontact"

grep -q '^prefix=\${pcfiledir}/' "$pcfile" || fail "dvicontact.pc is not relocatable (prefix=\${pcfiledir}/...)"
PKG_CONFIG_PATH=$pcdir
PKG_CONFIG_LIBDIR=$pcdir
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
pkg-config --exists dvicontact || fail "pkg-config cannot read $pcfile"
[ "$(pkg-config --modversion dvicontact)" = "0.1.0" ] || fail "pkg-config --modversion is not 0.1.0"
cflags=$(pkg-config --cflags dvicontact)
libs=$(pkg-config --libs dvicontact)
prefix=$(cd "$(pkg-config --variable=prefix dvicontact)" && pwd -P) || fail "the .pc prefix does not exist"
includedir=$(cd "$(pkg-config --variable=includedir dvicontact)" && pwd -P) || fail "the .pc includedir does not exist"
libdir=$(cd "$(pkg-config --variable=libdir dvicontact)" && pwd -P) || fail "the .pc libdir does not exist"
case $prefix in "$(cd "$stage" && pwd -P)"/*) ;; *) fail "the .pc prefix $prefix is not inside the staging directory" ;; esac
echo "test_install: prefix $prefix"
echo "test_install: cflags: $cflags"
echo "test_install: libs:   $libs"

# --- 3. headers ----------------------------------------------------------------
for h in base.h ccp.h shape.h world.h io.h scene.h output.h dvi.h; do
    [ -f "$includedir/dvi/$h" ] || fail "header $includedir/dvi/$h missing"
    # each public header must compile on its own, as C11, pedantically
    printf '#include <dvi/%s>\nint dvi_header_test_dummy;\n' "$h" >"$tmp/h_$h.c"
    # shellcheck disable=SC2086
    if ! $CC -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $cflags "$tmp/h_$h.c" >"$tmp/h.log" 2>&1; then
        cat "$tmp/h.log" >&2
        fail "installed header dvi/$h does not compile on its own"
    fi
done
# no private header leaks into the installed include tree
if find "$stage" -name 'ccp_work.h' | grep -q .; then fail "private header ccp_work.h was installed"; fi

# --- 4. the shared library and its SONAME chain ---------------------------------
real=$libdir/libdvicontact.so.0.1.0
if [ ! -f "$real" ] || [ -L "$real" ]; then fail "$real missing (or not a regular file)"; fi
[ -L "$libdir/libdvicontact.so.0" ] || fail "$libdir/libdvicontact.so.0 is not a symlink"
[ -L "$libdir/libdvicontact.so" ] || fail "$libdir/libdvicontact.so (development symlink) is not a symlink"
[ "$(readlink "$libdir/libdvicontact.so.0")" = "libdvicontact.so.0.1.0" ] ||
    fail "libdvicontact.so.0 -> $(readlink "$libdir/libdvicontact.so.0"), expected libdvicontact.so.0.1.0"
t=$(readlink "$libdir/libdvicontact.so")
[ "$t" = "libdvicontact.so.0" ] || [ "$t" = "libdvicontact.so.0.1.0" ] ||
    fail "libdvicontact.so -> $t, expected libdvicontact.so.0"
[ -e "$libdir/libdvicontact.so" ] || fail "libdvicontact.so is a dangling symlink"
if command -v readelf >/dev/null 2>&1; then
    soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
    [ "$soname" = "libdvicontact.so.0" ] || fail "SONAME of $real is '$soname', expected libdvicontact.so.0"
    # the one run path allowed: the directory of the BLAS/LAPACK without
    # threads that meson -Dblas chose (a system directory, e.g.
    # /usr/lib/x86_64-linux-gnu/openblas-serial; docs/performance.md)
    rpath=$(readelf -d "$real" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\].*/\2/p')
    for d in $(echo "$rpath" | tr ':' ' '); do
        case "$d" in
            /usr/lib/*/openblas-serial|/usr/lib/*/blas|/usr/lib/*/lapack) ;;
            *) fail "installed library carries a run path other than the BLAS directory: $rpath" ;;
        esac
    done
else
    echo "test_install: readelf not found, SONAME not checked"
fi
if command -v nm >/dev/null 2>&1; then
    nm -D --defined-only "$real" | awk '{print $NF}' >"$tmp/syms"
    for sym in dvi_ccp_solve dvi_ccp_validate dvi_ccp_evaluate dvi_solver_create dvi_solver_solve \
        dvi_default_solver_settings dvi_inv_mass_block dvi_status_string dvi_version_string \
        dvi_csv_open dvi_svg_plot_csv dvi_vtk_write_frame dvi_vtk_write_pvd dvi_json_writer_open_buffer; do
        grep -qx "$sym" "$tmp/syms" || fail "public symbol $sym is not exported"
    done
    # internals are built with hidden visibility and must not be exported
    for sym in ccp_work_prepare ccp_work_apply ccp_cone_project ccp_solver_apgd ccp_norm2; do
        if grep -qx "$sym" "$tmp/syms"; then fail "internal symbol $sym is exported"; fi
    done
    # every exported function carries the dvi_ prefix
    bad=$(grep -v '^dvi_' "$tmp/syms" | grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' || true)
    [ -z "$bad" ] || fail "symbols exported without the dvi_ prefix: $(echo "$bad" | tr '\n' ' ')"
else
    echo "test_install: nm not found, exported symbols not checked"
fi

# --- 5. the data, the guides and the installed dvi ------------------------------
share=$prefix/share
for f in "$src"/examples/scenes/*.json; do
    [ -f "$share/dvicontact/scenes/$(basename "$f")" ] ||
        fail "scene $(basename "$f") is not installed in share/dvicontact/scenes (list it in data/meson.build)"
    cmp -s "$f" "$share/dvicontact/scenes/$(basename "$f")" || fail "installed $(basename "$f") differs from examples/scenes"
done
for f in dvicontact/scene.schema.json dvicontact/rover/rocker_bogie_rover.json dvicontact/rover/README.md \
    doc/dvicontact/cli.md doc/dvicontact/references.md doc/dvicontact/scene-format.md; do
    [ -f "$share/$f" ] || fail "share/$f is not installed"
done
dvi=$prefix/bin/dvi
[ -x "$dvi" ] || fail "$dvi is not installed"
# no LD_LIBRARY_PATH: the program's RUNPATH ($ORIGIN/../LIBDIR) must find the library
if command -v readelf >/dev/null 2>&1; then
    runpath=$(readelf -d "$dvi" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\].*/\2/p')
    case $runpath in
    '$ORIGIN'/*) ;;
    *) fail "installed dvi has RUNPATH '$runpath', expected one relative to \$ORIGIN" ;;
    esac
    echo "test_install: installed dvi RUNPATH $runpath"
fi
if command -v ldd >/dev/null 2>&1; then
    resolved=$(env -u LD_LIBRARY_PATH ldd "$dvi" | sed -n 's/.*libdvicontact\.so\.0 => \([^ ]*\).*/\1/p')
    resolved_dir=$(cd "$(dirname "$resolved")" 2>/dev/null && pwd -P)
    [ "$resolved_dir" = "$libdir" ] ||
        fail "installed dvi loads libdvicontact.so.0 from '$resolved' without LD_LIBRARY_PATH, not from $libdir"
fi
env -u LD_LIBRARY_PATH "$dvi" --help >"$tmp/help.txt" 2>&1 ||
    fail "installed dvi --help failed with LD_LIBRARY_PATH unset: $(cat "$tmp/help.txt")"
grep -q "example scenes *$share/dvicontact/scenes" "$tmp/help.txt" ||
    fail "installed dvi --help does not name $share/dvicontact/scenes: $(cat "$tmp/help.txt")"
grep -q "the manual *$share/doc/dvicontact/cli.md" "$tmp/help.txt" ||
    fail "installed dvi --help does not name the installed manual"
env -u LD_LIBRARY_PATH "$dvi" check "$share/dvicontact/scenes/pendulum.json" >"$tmp/check.txt" 2>&1 ||
    fail "installed dvi check of an installed scene failed: $(cat "$tmp/check.txt")"
# the .pc descriptions: no solver named, or every solver of the registry
# (the first column of the rows of `dvi solve --all-solvers`, after its header)
env -u LD_LIBRARY_PATH "$dvi" solve "$src/tests/data/ccp/stack3.json" --all-solvers >"$tmp/solve.txt" 2>&1 ||
    fail "installed dvi solve --all-solvers failed: $(cat "$tmp/solve.txt")"
solvers=$(sed -n '/^solver /,$p' "$tmp/solve.txt" | sed 1d | awk '{print $1}')
[ "$(echo "$solvers" | wc -w)" -ge 7 ] || fail "cannot read the solvers from dvi solve --all-solvers: $solvers"
for pc in dvicontact dvicontact-ccp; do
    desc=$(sed -n 's/^Description: *//p' "$pcdir/$pc.pc" | tr 'A-Z' 'a-z')
    named=0
    missing=
    for s in $solvers; do
        if echo "$desc" | grep -qw "$s"; then named=$((named + 1)); else missing="$missing $s"; fi
    done
    [ "$named" -eq 0 ] || [ -z "$missing" ] || fail "$pc.pc Description names some solvers but not:$missing"
done
echo "test_install: the .pc descriptions name no solver or all $(echo "$solvers" | wc -w) ($(echo $solvers))"
echo "test_install: $(ls "$share/dvicontact/scenes" | wc -l) scenes, the schema, the rover model and $(ls "$share/doc/dvicontact" | wc -l) guide files installed; dvi --help names them"
# no installed file names the source or the build tree (strings of binaries too)
srcreal=$(cd "$src" && pwd -P)
buildreal=$(cd "$build" && pwd -P)
find "$stage" -type f >"$tmp/files"
while IFS= read -r f; do
    for p in "$srcreal" "$buildreal" "$src" "$build"; do
        if LC_ALL=C grep -a -q -F "$p" "$f"; then fail "installed $f contains the path $p"; fi
    done
done <"$tmp/files"
echo "test_install: no installed file carries a path of the source or build tree ($(wc -l <"$tmp/files") files)"

# --- 6. the solver layer alone, and the embedding example against it ------------
# libdvicontact-ccp: its own .pc, and it needs nothing but libc, libm, OpenMP
# and BLAS/LAPACK (with their Fortran runtime): no HDF5, cJSON or CHOLMOD
pkg-config --exists dvicontact-ccp || fail "dvicontact-ccp.pc was not installed"
ccp_cflags=$(pkg-config --cflags dvicontact-ccp)
ccp_libs=$(pkg-config --libs dvicontact-ccp)
case $ccp_libs in *-ldvicontact-ccp*) ;; *) fail "dvicontact-ccp.pc Libs does not link -ldvicontact-ccp: $ccp_libs" ;; esac
ccp_real=$libdir/libdvicontact-ccp.so.0.1.0
[ -f "$ccp_real" ] || fail "$ccp_real missing"
if command -v ldd >/dev/null 2>&1; then
    extra=$(ldd "$ccp_real" | awk '{print $1}' | sed 's|.*/||; s/\.so.*//' |
        grep -Ev '^(linux-vdso|ld-linux.*|libc|libm|libgomp|libopenblas|liblapacke|liblapack|libblas|libtmglib|libgfortran|libquadmath|libgcc_s|libasan|libubsan|libstdc\+\+)$' || true)
    [ -z "$extra" ] || fail "libdvicontact-ccp needs more than libc, libm, OpenMP and BLAS/LAPACK: $(echo "$extra" | tr '\n' ' ')"
    echo "test_install: libdvicontact-ccp needs $(ldd "$ccp_real" | wc -l) libraries: $(ldd "$ccp_real" | awk '{print $1}' | tr '\n' ' ')"
fi
if command -v nm >/dev/null 2>&1; then
    nm -D --defined-only "$ccp_real" | awk '{print $NF}' >"$tmp/ccp_syms"
    for sym in dvi_ccp_solve dvi_solver_create dvi_solver_solve dvi_solver_record_history; do
        grep -qx "$sym" "$tmp/ccp_syms" || fail "libdvicontact-ccp does not export $sym"
    done
    for sym in dvi_world_create dvi_scene_load dvi_csv_open dvi_fclib_read; do
        if grep -qx "$sym" "$tmp/ccp_syms"; then fail "libdvicontact-ccp exports $sym, which is not of the solver layer"; fi
    done
fi
cflags=$ccp_cflags
libs=$ccp_libs
example=$src/examples/embed_solver.c
[ -f "$example" ] || fail "$example not found"
# a sanitizer build (-Db_sanitize=...) installs a library that needs the
# sanitizer runtime: the program must then be built with the same runtime
san=
if command -v readelf >/dev/null 2>&1; then
    readelf -d "$real" | grep -q 'NEEDED.*libasan' && san="$san -fsanitize=address"
    readelf -d "$real" | grep -q 'NEEDED.*libubsan' && san="$san -fsanitize=undefined"
fi
# shellcheck disable=SC2086
if ! $CC $san "$example" -o "$tmp/embed_solver" $cflags $libs >"$tmp/cc.log" 2>&1; then
    cat "$tmp/cc.log" >&2
    fail "examples/embed_solver.c does not build with: $CC embed_solver.c $cflags $libs"
fi
cflags=$(pkg-config --cflags dvicontact)
libs=$(pkg-config --libs dvicontact)
# make sure the installed copy (and not the build tree) is what gets loaded
LD_LIBRARY_PATH=$libdir
export LD_LIBRARY_PATH
if command -v ldd >/dev/null 2>&1; then
    resolved=$(ldd "$tmp/embed_solver" | sed -n 's/.*libdvicontact-ccp\.so\.0 => \([^ ]*\).*/\1/p')
    case $resolved in
    "$libdir"/*) ;;
    *) fail "embed_solver loads libdvicontact-ccp.so.0 from '$resolved', not from the staged $libdir" ;;
    esac
    if ldd "$tmp/embed_solver" | grep -q 'libdvicontact\.so'; then fail "embed_solver links the full library, not the solver layer alone"; fi
fi
status=0
"$tmp/embed_solver" >"$tmp/run.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    cat "$tmp/run.log" >&2
    fail "embed_solver built against the installed copy exited with status $status"
fi
sed 's/^/test_install: embed_solver: /' "$tmp/run.log"

# --- 7. the output writers from the installed copy -------------------------------
# a program of an embedder: steps a world and writes the files `dvi run` writes
cat >"$tmp/writers.c" <<'C'
#include <dvi/dvi.h>
#include <stdio.h>
int main(int argc, char** argv)
{
    char msg[256], path[4096];
    const char* dir = argc > 1 ? argv[1] : ".";
    dvi_world* w;
    if (dvi_world_create(NULL, &w) != DVI_OK) return 1;
    dvi_body_def bd = dvi_default_body_def();
    bd.position[2] = 1.0;
    dvi_body_id ball;
    dvi_shape_def sd = dvi_default_shape_def();
    sd.radius = 0.1;
    dvi_shape_id s;
    if (dvi_body_create(w, &bd, &ball) != DVI_OK || dvi_shape_create(w, ball, &sd, &s) != DVI_OK) return 1;
    const char* names[] = {"time", "ball.z"};
    const char* units[] = {"s", "m"};
    dvi_csv* csv;
    snprintf(path, sizeof path, "%s/ball.csv", dir);
    if (dvi_csv_open(&csv, path, 2, names, units, msg, sizeof msg) != 0) return fprintf(stderr, "%s\n", msg), 1;
    double times[3];
    for (int f = 0; f < 3; f++) {
        for (int k = 0; k < 10; k++) dvi_world_step(w, 1e-3);
        double p[3], row[2];
        dvi_body_get_position(w, ball, p);
        row[0] = dvi_world_time(w);
        row[1] = p[2];
        times[f] = row[0];
        if (dvi_csv_write_row(csv, row) != 0) return 1;
        snprintf(path, sizeof path, "%s/vtk", dir);
        if (dvi_vtk_write_frame(w, path, f, msg, sizeof msg) != 0) return fprintf(stderr, "%s\n", msg), 1;
    }
    if (dvi_csv_close(csv) != 0 || dvi_vtk_write_pvd(path, 3, times, msg, sizeof msg) != 0) return 1;
    char in[4096], out[4096];
    snprintf(in, sizeof in, "%s/ball.csv", dir);
    snprintf(out, sizeof out, "%s/ball.svg", dir);
    if (dvi_svg_plot_csv(in, out, "ball", msg, sizeof msg) != 0) return fprintf(stderr, "%s\n", msg), 1;
    dvi_world_destroy(w);
    return 0;
}
C
# shellcheck disable=SC2086
if ! $CC $san -std=c11 -Wall -Wextra -Werror "$tmp/writers.c" -o "$tmp/writers" $cflags $libs >"$tmp/cc.log" 2>&1; then
    cat "$tmp/cc.log" >&2
    fail "a program calling the output writers (<dvi/output.h>) does not build against the installed copy"
fi
mkdir "$tmp/out"
"$tmp/writers" "$tmp/out" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; fail "the output writers' program failed"; }
for f in ball.csv ball.svg vtk/bodies.pvd vtk/frames/bodies_000002.vtp; do
    [ -s "$tmp/out/$f" ] || fail "the output writers' program wrote no $f"
done
[ "$(wc -l <"$tmp/out/ball.csv")" -eq 4 ] || fail "ball.csv has $(wc -l <"$tmp/out/ball.csv") lines, expected a header and 3 rows"
echo "test_install: a program of its own wrote ball.csv, ball.svg and 3 VTK frames through <dvi/output.h>"
# the same program linked as docs/embedding.md says for a prefix outside the
# loader's path, -Wl,-rpath,LIBDIR, runs without LD_LIBRARY_PATH
# shellcheck disable=SC2086
if ! $CC $san -std=c11 "$tmp/writers.c" -o "$tmp/writers_rpath" $cflags $libs -Wl,-rpath,"$libdir" >"$tmp/cc.log" 2>&1; then
    cat "$tmp/cc.log" >&2
    fail "a program does not build with \$(pkg-config --libs dvicontact) -Wl,-rpath,LIBDIR"
fi
mkdir "$tmp/out_rpath"
env -u LD_LIBRARY_PATH "$tmp/writers_rpath" "$tmp/out_rpath" >"$tmp/run.log" 2>&1 ||
    { cat "$tmp/run.log" >&2; fail "a program linked with -Wl,-rpath,LIBDIR failed with LD_LIBRARY_PATH unset"; }
echo "test_install: linked with -Wl,-rpath,LIBDIR, it runs with LD_LIBRARY_PATH unset"
# the Python package, when the build has it: installed beside the library
# (its extension's RUNPATH, relative to its own place, finds the staged
# library), imported from the staging directory alone and solving a problem
ext=$(find "$stage" -path '*/dvicontact/_core*.so' -type f | head -n 1)
if [ -n "$ext" ] && [ -z "$san" ]; then
    pydir=$(dirname "$(dirname "$ext")")
    [ -f "$pydir/dvicontact/__init__.py" ] || fail "the Python package's __init__.py is not beside $ext"
    readelf -d "$ext" | grep -q 'R.*PATH.*\$ORIGIN' || fail "the installed $ext has no RUNPATH relative to \$ORIGIN"
    python=/usr/bin/python3
    [ -x "$python" ] || python=python3
    if ! env -u LD_LIBRARY_PATH -u DVI_EXE PYTHONPATH="$pydir" "$python" -c '
import os, dvicontact, numpy as np
from dvicontact import _paths
# dvicontact.study runs the installed dvi, found from the place of the package
exe = _paths.dvi_exe()
assert os.path.realpath(exe) == os.path.realpath(__import__("sys").argv[2]), exe
assert dvicontact.__file__.startswith(__import__("sys").argv[1]), dvicontact.__file__
# a contact pressed at 1 m/s and sliding at 2 m/s, mu 0.5, W = I: the CCP
# slides on the cone edge, gamma_t = -mu gamma_n, with u_n = mu |u_t|:
# gamma_n - 1 = 0.5 (2 - 0.5 gamma_n), so gamma = (1.6, -0.8, 0)
p = dvicontact.Problem("friction", np.array([-1.0, 2.0, 0.0]), mu=0.5, W=np.eye(3))
res = dvicontact.solve(p, solver="apgd")
assert res.converged and abs(res.gamma[0] - 1.6) < 1e-8 and abs(res.gamma[1] + 0.8) < 1e-8, res.gamma
' "$pydir" "$(find "$stage" -path '*/bin/dvi' -type f | head -n 1)" >"$tmp/py.log" 2>&1; then
        cat "$tmp/py.log" >&2
        fail "the installed Python package does not import or solve from $pydir"
    fi
    echo "test_install: the Python package imports from $pydir and solves a problem (LD_LIBRARY_PATH unset); its study() finds the installed dvi"
fi
echo "test_install: OK"
exit 0
