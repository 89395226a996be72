#!/bin/sh
# Installs missing packages, builds (optimised) and runs the main job: the
# rocker-bogie rover drives over a 0.15 m hemisphere on rigid ground
# (examples/scenes/rover_obstacle_rigid.json: the thesis's wheel speed,
# 160 s simulated, 160,000 steps; about 13 s on one core at 0.08 ms a
# step, after a build of about 30 s). Outputs in
# out/rover_obstacle_rigid/: one CSV and one SVG per probe and events.json;
# the event table on stdout (docs/rover.md).
set -e
cd "$(dirname "$0")/.."
sh tools/deps.sh
[ -d build-release ] || meson setup build-release -Dbuildtype=release -Dtests=false >/dev/null
ninja -C build-release >/dev/null
./build-release/studies/rover/rover_obstacle examples/scenes/rover_obstacle_rigid.json --out out/rover_obstacle_rigid
