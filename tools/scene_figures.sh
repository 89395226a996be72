#!/bin/sh
# Renders the scene pictures of docs/outputs.md from fresh runs:
#   sh tools/scene_figures.sh           # both
#   sh tools/scene_figures.sh strip     # the rover on the granular strip (about a minute)
#   sh tools/scene_figures.sh pour      # spheres poured into a bin (examples/scenes/pour_bin.json)
# DVI names the dvi command (default: build-release/tool/dvi, else build/tool/dvi).
# The runs go to out/figures/, the pictures to docs/figures/.
set -e
cd "$(dirname "$0")/.."
if [ -z "$DVI" ]; then
    DVI=build-release/tool/dvi
    [ -x "$DVI" ] || DVI=build/tool/dvi
fi
[ $# -gt 0 ] || set -- strip pour
for fig in "$@"; do
    case "$fig" in
    strip)
        # 1 s: the wheels have settled on the grains; the right wall is cropped off
        "$DVI" run examples/scenes/rover_obstacle_granular_strip_hex.json --duration 1 --vtk-every 100 \
            --out out/figures/strip --quiet
        python3 tools/render_frame.py out/figures/strip/vtk --frame 10 --view=-65,30 \
            --crop=-1.65,1.95,-1.49,1.7,-0.3,1.5 --width 1100 \
            --title "rover_obstacle_granular_strip_hex at t = 1 s" --out docs/figures/vtk_rover_strip.svg
        ;;
    pour)
        "$DVI" run examples/scenes/pour_bin.json --vtk-every 200 --out out/figures/pour --quiet
        python3 tools/render_frame.py out/figures/pour/vtk --frame last --view=-60,40 --static-opacity 0.4 --width 1000 \
            --title "pour_bin: the last frame" --out docs/figures/vtk_pour_bin.svg
        ;;
    *)
        echo "usage: sh tools/scene_figures.sh [strip] [pour]" >&2
        exit 2
        ;;
    esac
done
