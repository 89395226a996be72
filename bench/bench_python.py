#!/usr/bin/python3
"""The cost of the Python package over the C library it calls.

Usage: bench_python.py [--json] [--quick] [--rows NAME,...]

One row per measurement (the table ROWS below: one function each). Prints a
table, or with --json one JSON object a row. --quick repeats less (for the
test suite, which checks that the rows run, not their figures).

Rows:
  solve_10_contacts  a 10-contact friction problem (ten balls on the ground,
                     half sliding) solved by APGD: the time per solve of
                     Solver.solve in a Python loop and of the same solves in
                     a C loop (_core._time_solve), medians of 7 repetitions;
                     keys name, python_us, c_us, overhead_us.
  rover_step         one step of the rigid rover (examples/scenes/
                     rover_obstacle_rigid.json) from Model.step() against the
                     C loop of _core._Model._time_steps: the same step each
                     time (the state saved after 200 steps is restored before
                     every timed step), alternated, the fastest of 200; the
                     same keys.

Run from a build tree: PYTHONPATH=BUILD/python bench/bench_python.py
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

import dvicontact


def ten_balls():
    """Ten balls (2 kg, 0.1 m) on the ground, one contact each, step 1 ms under
    gravity; ball k moves at 0.02 k m/s along x (the first ones stick, the
    others slide): a factor-form problem of 10 friction blocks, 30 rows."""
    m, radius, g, h = 2.0, 0.1, 9.81, 1e-3
    n = 10
    rows, cols, vals = [], [], []
    dirs = np.array([[0, 0, 1.0], [1.0, 0, 0], [0, 1.0, 0]])
    arm = np.array([0, 0, -radius])
    for b in range(n):
        for c, d in enumerate(dirs):
            for k, v in enumerate(np.concatenate([d, np.cross(arm, d)])):
                if v != 0.0:
                    rows.append(6 * b + k)
                    cols.append(3 * b + c)
                    vals.append(v)
    import scipy.sparse as sp
    D = sp.csc_matrix((vals, (rows, cols)), shape=(6 * n, 3 * n))
    v_free = np.zeros(6 * n)
    v_free[0::6] = 0.02 * np.arange(n)
    v_free[2::6] = -g * h
    return dvicontact.Problem("friction", D.T @ v_free, mu=0.4, D=D, mass=np.full(n, m),
                              inertia=np.array([0.4 * m * radius**2 * np.eye(3)] * n))


def solve_10_contacts(quick):
    p = ten_balls()
    s = dvicontact.Solver("apgd")
    assert s.solve(p).converged
    n = 200 if quick else 5000
    reps = 3 if quick else 7
    py, c = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            s.solve(p)
        py.append((time.perf_counter() - t0) / n)
        c.append(dvicontact._core._time_solve(s, p, n))
    python_us, c_us = 1e6 * statistics.median(py), 1e6 * statistics.median(c)
    return {"name": "solve_10_contacts", "python_us": python_us, "c_us": c_us, "overhead_us": python_us - c_us}


def rover_step(quick):
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scene = dvicontact.Scene(os.path.join(src, "examples", "scenes", "rover_obstacle_rigid.json"),
                             overrides={"threads": 1})
    m = dvicontact.Model(scene)
    m.step(200)  # on the ground, driving: the contacts and joints of the run
    state = m.save_state()
    core = m._m
    py, c = [], []
    for _ in range(20 if quick else 200):  # alternated, so that a slow spell of the machine falls on both
        m.load_state(state)
        t0 = time.perf_counter()
        m.step()
        py.append(time.perf_counter() - t0)
        m.load_state(state)
        c.append(core._time_steps(1))
    python_us, c_us = 1e6 * min(py), 1e6 * min(c)
    return {"name": "rover_step", "python_us": python_us, "c_us": c_us, "overhead_us": python_us - c_us}


# name -> function(quick) -> dict with "name" and the row's figures
ROWS = {
    "solve_10_contacts": solve_10_contacts,
    "rover_step": rover_step,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="one JSON object a row")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (the test suite's run)")
    ap.add_argument("--rows", default=",".join(ROWS), help="rows to run (default: all): " + ", ".join(ROWS))
    args = ap.parse_args()
    names = [r for r in args.rows.split(",") if r]
    for r in names:
        if r not in ROWS:
            ap.error(f"--rows: unknown row '{r}' (rows: {', '.join(ROWS)})")
    ok = True
    for r in names:
        row = ROWS[r](args.quick)
        figures = [v for k, v in row.items() if k != "name"]
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in figures):
            ok = False
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{row['name']:<22}" + "".join(f"  {k} {v:10.2f}" for k, v in row.items() if k != "name"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
