#!/bin/sh
# Prints, for every example scene (or the scenes named after BUILD), the
# hash of the world's state after a few steps and a hash of the probe CSVs
# the run wrote: two builds that give the same lines compute the same bits.
#
#   sh tools/scene_hashes.sh BUILD [SCENE.json ...] > hashes.txt
#
# BUILD is a build directory (build, build-release, ...). Each scene runs
# for STEPS steps (default 20, environment variable) on one thread; the
# columns are: scene, steps, state hash (the checkpoint's fingerprint of
# positions, velocities and warm-start data), sha256 of the probe CSVs
# (their wall-clock columns removed), wall seconds. Compare two builds or
# two commits with diff(1) on the first four columns.
set -eu
build=${1:?usage: sh tools/scene_hashes.sh BUILD [SCENE.json ...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd -P)
dvi="$build/tool/dvi"
[ -x "$dvi" ] || { echo "scene_hashes.sh: $dvi not found (build first)" >&2; exit 1; }
[ $# -gt 0 ] || set -- "$here"/examples/scenes/*.json
steps=${STEPS:-20}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvi-hashes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
for scene in "$@"; do
    name=$(basename "$scene" .json)
    out="$tmp/$name"
    dt=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['formulation']['dt'])" "$scene")
    duration=$(python3 -c "import sys; print(repr(float(sys.argv[1]) * int(sys.argv[2])))" "$dt" "$steps")
    start=$(date +%s.%N)
    if ! DVICONTACT_DATA="$here/data" "$dvi" run "$scene" --duration "$duration" --threads 1 \
            --checkpoint-minutes 0 --out "$out" --quiet >"$tmp/log" 2>&1; then
        echo "$name: the run failed:" >&2
        cat "$tmp/log" >&2
        status=1
        continue
    fi
    end=$(date +%s.%N)
    python3 - "$out" "$name" "$start" "$end" <<'PY'
import glob, hashlib, json, os, sys
out, name, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
summary = json.load(open(os.path.join(out, "summary.json")))
state = json.load(open(os.path.join(out, "checkpoint", "run.json")))["state"]["hash"]
h = hashlib.sha256()
for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
    rows = [line.rstrip("\n").split(",") for line in open(path)]
    keep = [i for i, title in enumerate(rows[0]) if not title.startswith("wall_")]
    h.update(os.path.basename(path).encode())
    for r in rows:
        h.update(",".join(r[i] for i in keep if i < len(r)).encode() + b"\n")
print(f"{name:48s} {summary['steps']:6d} {state:16s} {h.hexdigest()[:16]} {end - start:8.2f}")
PY
done
exit $status
