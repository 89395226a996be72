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
#   - the pkg-config file dvicontact.pc;
# and finally compiles examples/embed_solver.c with
#   cc embed_solver.c $(pkg-config --cflags --libs dvicontact)
# against the staged copy only (PKG_CONFIG_SYSROOT_DIR maps the .pc paths into
# the staging directory) and runs it. Exit 0 on success; otherwise a message
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

PKG_CONFIG_PATH=$pcdir
PKG_CONFIG_LIBDIR=$pcdir
PKG_CONFIG_SYSROOT_DIR=$stage
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
pkg-config --exists dvicontact || fail "pkg-config cannot read $pcfile"
[ "$(pkg-config --modversion dvicontact)" = "0.1.0" ] || fail "pkg-config --modversion is not 0.1.0"
cflags=$(pkg-config --cflags dvicontact)
libs=$(pkg-config --libs dvicontact)
prefix=$(pkg-config --variable=prefix dvicontact)
prefix=${prefix#"$stage"}
includedir=$stage$(pkg-config --variable=includedir dvicontact)
libdir=$stage$(pkg-config --variable=libdir dvicontact)
case $libdir in "$stage$stage"*) libdir=${libdir#"$stage"} ;; esac
case $includedir in "$stage$stage"*) includedir=${includedir#"$stage"} ;; esac
echo "test_install: prefix $prefix, staged under $stage"
echo "test_install: cflags: $cflags"
echo "test_install: libs:   $libs"

# --- 3. headers ----------------------------------------------------------------
for h in base.h ccp.h dvi.h; do
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
    if readelf -d "$real" | grep -Eq '\((RPATH|RUNPATH)\)'; then
        fail "installed library still carries an RPATH/RUNPATH: $(readelf -d "$real" | grep -E 'RPATH|RUNPATH')"
    fi
else
    echo "test_install: readelf not found, SONAME not checked"
fi
if command -v nm >/dev/null 2>&1; then
    nm -D --defined-only "$real" | awk '{print $NF}' >"$tmp/syms"
    for sym in dvi_ccp_solve dvi_ccp_validate dvi_ccp_evaluate dvi_solver_create dvi_solver_solve \
        dvi_default_solver_settings dvi_inv_mass_block dvi_status_string dvi_version_string; do
        grep -qx "$sym" "$tmp/syms" || fail "public symbol $sym is not exported"
    done
    # internals are built with hidden visibility and must not be exported
    for sym in dvi_work_prepare dvi_work_apply dvi_cone_project dvi_solver_apgd dvi_norm2; do
        if grep -qx "$sym" "$tmp/syms"; then fail "internal symbol $sym is exported"; fi
    done
    # every exported function carries the dvi_ prefix
    bad=$(grep -v '^dvi_' "$tmp/syms" | grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' || true)
    [ -z "$bad" ] || fail "symbols exported without the dvi_ prefix: $(echo "$bad" | tr '\n' ' ')"
else
    echo "test_install: nm not found, exported symbols not checked"
fi

# --- 5. the embedding example against the installed copy -----------------------
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
# make sure the installed copy (and not the build tree) is what gets loaded
LD_LIBRARY_PATH=$libdir
export LD_LIBRARY_PATH
if command -v ldd >/dev/null 2>&1; then
    resolved=$(ldd "$tmp/embed_solver" | sed -n 's/.*libdvicontact\.so\.0 => \([^ ]*\).*/\1/p')
    case $resolved in
    "$libdir"/*) ;;
    *) fail "embed_solver loads libdvicontact.so.0 from '$resolved', not from the staged $libdir" ;;
    esac
fi
status=0
"$tmp/embed_solver" >"$tmp/run.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    cat "$tmp/run.log" >&2
    fail "embed_solver built against the installed copy exited with status $status"
fi
sed 's/^/test_install: embed_solver: /' "$tmp/run.log"
echo "test_install: OK"
exit 0
