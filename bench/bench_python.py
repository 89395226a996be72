#!/usr/bin/env python3
"""What the Python package costs over the C library: one row per case, the
same work timed from Python and from C, and the difference per call.

    PYTHONPATH=BUILD/python /usr/bin/python3 bench/bench_python.py [--json] [--repeats N]

Columns (microseconds per call): python_us, the call from Python; c_us, the
same work in a C loop; overhead_us, their difference. A table by default;
--json prints one JSON object per row. Rows:

  rover_step  one step of the rigid rover (examples/scenes/rover_obstacle_rigid.json)
              from Model.step() against the C loop of _core._Model._time_steps:
              the same step each time (the state saved after 200 steps is
              restored before every timed step); the fastest of the repeats.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def rover_step(repeats):
    import dvicontact

    scene = dvicontact.Scene(os.path.join(SRC, "examples", "scenes", "rover_obstacle_rigid.json"),
                             overrides={"threads": 1})
    m = dvicontact.Model(scene)
    m.step(200)  # on the ground, driving: the contacts and joints of the run
    state = m.save_state()
    core = m._m
    py, c = [], []
    for _ in range(repeats):  # alternated, so that a slow spell of the machine falls on both
        m.load_state(state)
        t0 = time.perf_counter()
        m.step()
        py.append(time.perf_counter() - t0)
        m.load_state(state)
        c.append(core._time_steps(1))
    python_us, c_us = 1e6 * min(py), 1e6 * min(c)
    return {"name": "rover_step", "python_us": python_us, "c_us": c_us, "overhead_us": python_us - c_us}


# The rows: name -> function(repeats) -> dict(name, python_us, c_us, overhead_us).
ROWS = {
    "rover_step": rover_step,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="one JSON object per row")
    ap.add_argument("--repeats", type=int, default=200, help="timed calls per row (default 200)")
    ap.add_argument("rows", nargs="*", help=f"rows to run (default all: {', '.join(ROWS)})")
    a = ap.parse_args()
    names = a.rows or list(ROWS)
    for n in names:
        if n not in ROWS:
            print(f"bench_python.py: no row {n!r} (rows: {', '.join(ROWS)})", file=sys.stderr)
            return 2
    if not a.json:
        print(f"{'row':24s} {'python_us':>10s} {'c_us':>10s} {'overhead_us':>12s}")
    for n in names:
        r = ROWS[n](a.repeats)
        if a.json:
            print(json.dumps(r))
        else:
            print(f"{r['name']:24s} {r['python_us']:10.2f} {r['c_us']:10.2f} {r['overhead_us']:12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
