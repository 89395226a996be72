#!/bin/sh
# Installs missing packages, builds (optimised) and runs the main job: the
# rocker-bogie rover drives over a 0.15 m hemisphere on rigid ground
# (examples/scenes/rover_obstacle_rigid.json: the thesis's wheel speed,
# 160 s simulated, 160,000 steps; times measured on 2 cores are in
# README.md). Outputs in out/rover_obstacle_rigid/: one CSV and one SVG per
# probe and events.json; the event table on stdout (docs/rover.md). A
# failing build prints its own output.
set -e
cd "$(dirname "$0")/.."
sh tools/deps.sh
if [ ! -f build-release/build.ninja ]; then
    rm -rf build-release
    log=$(mktemp)
    if ! meson setup build-release -Dbuildtype=release -Dtests=false >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "run-demo.sh: 'meson setup build-release' failed (above; the log is build-release/meson-logs/meson-log.txt)" >&2
        exit 1
    fi
    mv "$log" build-release/setup.log
fi
if ! ninja -C build-release >build-release/build.log 2>&1; then
    grep -v '^\[[0-9]*/[0-9]*\] ' build-release/build.log | tail -60 >&2
    echo "run-demo.sh: 'ninja -C build-release' failed (above; the whole output is build-release/build.log)" >&2
    exit 1
fi
./build-release/studies/rover/rover_obstacle examples/scenes/rover_obstacle_rigid.json --out out/rover_obstacle_rigid
