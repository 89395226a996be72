#!/usr/bin/env python3
"""Every example scene (examples/scenes/*.json) runs its first steps with
`dvi run --strict` and exits 0 with no health warning: a correct run is
never failed by a false warning. Each scene runs STEPS steps of its own dt
(the granular beds, whose set-up and steps cost the most, GRANULAR_STEPS;
the sphere pile, whose thousand spheres land after 0.1 s, PILE_STEPS). The
solvers' own non-convergence notes are not health warnings: --strict does not
count them and neither does this check.

usage: check_examples_strict.py SOURCE_ROOT DVI [SCENE ...]"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

STEPS = 300
GRANULAR_STEPS = 5
PILE_STEPS = 60


def main():
    root, dvi = sys.argv[1], sys.argv[2]
    scenes = sys.argv[3:] or sorted(glob.glob(os.path.join(root, "examples", "scenes", "*.json")))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in scenes:
            name = os.path.splitext(os.path.basename(path))[0]
            with open(path) as f:
                scene = json.load(f)
            dt = scene.get("formulation", {}).get("dt", 0.001)
            steps = GRANULAR_STEPS if "granular" in name else PILE_STEPS if name == "sphere_pile" else STEPS
            duration = min(scene.get("duration", steps * dt), steps * dt)
            out = os.path.join(tmp, name)
            t0 = time.monotonic()
            p = subprocess.run([dvi, "run", path, "--strict", "--quiet", "--duration", repr(duration), "--out", out],
                               capture_output=True, text=True)
            wall = time.monotonic() - t0
            try:
                with open(os.path.join(out, "summary.json")) as f:
                    summary = json.load(f)
                raised = summary.get("health", {}).get("raised", [])
                audit = summary.get("health", {}).get("audit", {}).get("worst_relative", float("nan"))
            except (OSError, ValueError) as e:
                raised, audit = ["no summary.json: %s" % e], float("nan")
            print("%-44s %5d steps  %6.2f s  exit %d  audit %.2g  raised %s" % (name, round(duration / dt), wall,
                                                                                 p.returncode, audit, raised or "-"))
            if p.returncode != 0 or raised:
                failures.append("%s: exit %d; raised %s; %s" % (name, p.returncode, raised, p.stderr.strip()[-600:]))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
