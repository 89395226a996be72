#!/bin/sh
# Installs missing packages, builds (optimised) and runs the main job.
# Until the rover example lands, the main job is the solver demo: every
# solver on three contact problems, tables on stdout, CSV + SVG in out/.
set -e
cd "$(dirname "$0")/.."
sh tools/deps.sh
[ -d build-release ] || meson setup build-release -Dbuildtype=release -Dtests=false >/dev/null
ninja -C build-release >/dev/null
./build-release/examples/solver_demo out/solver_demo
