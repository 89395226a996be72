#!/usr/bin/env python3
"""Runs `bench_fclib --json` on two small FCLIB files (CubeH8, 1 contact, a
global problem; Rover1039, 4 contacts, a local one with a nonsymmetric W) and
checks its output: it exits with 0; every stdout line is a JSON object with
the keys of docs/fclib.md ("The columns"); every problem has one row per
solver, the same solvers for both and every built-in one among them; the law
is "ccp" or "coulomb"; "solved" follows the solver's law (a Coulomb solver:
Coulomb residual <= tolerance) and "coulomb_ok" the Coulomb residual. Rows of
the reference library (when built in) carry Siconos's own error, which is
the same measure as our Coulomb residual and must agree with it. Then checks
that an unknown solver is a usage error (status 2).

usage: check_bench_fclib.py BENCH_FCLIB SOURCE_ROOT"""
import json
import math
import os
import subprocess
import sys
import tempfile

KEYS = ["problem", "family", "kind", "contacts", "solver", "law", "iterations", "residual_ccp", "residual_coulomb",
        "seconds", "status", "solved", "coulomb_ok", "repeats", "tolerance", "max_iterations", "threads"]
FILES = [("tests/data/fclib", "CubeH8.hdf5"), ("bench/data/fclib", "Rover1039.hdf5")]
BUILT_IN = {"apgd", "pgs", "jacobi", "lemke"}


def fail(msg):
    print(f"check_bench_fclib: {msg}")
    return 1


def main():
    exe, root = sys.argv[1], sys.argv[2]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        for sub, name in FILES:
            os.symlink(os.path.join(root, sub, name), os.path.join(tmp, name))
        p = subprocess.run([exe, tmp, "--json", "--tolerance", "1e-8"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=600, env=env)
        q = subprocess.run([exe, tmp, "--solvers", "apgd,nosuch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60, env=env)
    sys.stderr.write(p.stderr)
    print(p.stdout, end="")
    if p.returncode != 0:
        return fail(f"exited with {p.returncode}")
    rows = []
    for n, line in enumerate(p.stdout.splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except ValueError as e:
            return fail(f"line {n}: not JSON: {e}")
    for n, r in enumerate(rows, 1):
        for k in KEYS:
            if k not in r:
                return fail(f"line {n}: no key {k}")
        if r["law"] not in ("ccp", "coulomb"):
            return fail(f"line {n}: law {r['law']!r}")
        if r["status"] in ("unsupported", "error"):
            return fail(f"line {n}: {r['solver']} on {r['problem']}: {r['status']}")
        for k in ("residual_ccp", "residual_coulomb", "seconds"):
            if not isinstance(r[k], (int, float)) or not math.isfinite(r[k]):
                return fail(f"line {n}: {k} is not a finite number")
        tol = r["tolerance"]
        if r["coulomb_ok"] != (r["residual_coulomb"] <= tol):
            return fail(f"line {n}: coulomb_ok disagrees with the Coulomb residual")
        if r["law"] == "coulomb" and r["solved"] != r["coulomb_ok"]:
            return fail(f"line {n}: a Coulomb solver's 'solved' must be its Coulomb residual's test")
        if r["law"] == "ccp" and r["solved"] != (r["status"] == "converged"):
            return fail(f"line {n}: a CCP solver's 'solved' must be its status converged")
        if r.get("reference"):
            if r["law"] != "coulomb" or not r["solver"].startswith("siconos:") or "siconos_error" not in r:
                return fail(f"line {n}: a reference row must be a Coulomb solver named siconos:... with siconos_error")
            own, ours = r["siconos_error"], r["residual_coulomb"]
            if not math.isfinite(own) or abs(own - ours) > 1e-10 + 1e-6 * max(own, ours):
                return fail(f"line {n}: Siconos's own error {own} and our Coulomb residual {ours} disagree")
            if not r["solved"]:
                return fail(f"line {n}: {r['solver']} does not solve {r['problem']}")
    solvers = {}
    for r in rows:
        solvers.setdefault(r["problem"], []).append(r["solver"])
    if sorted(solvers) != ["CubeH8", "Rover1039"]:
        return fail(f"problems {sorted(solvers)}")
    lists = list(solvers.values())
    if any(len(s) != len(set(s)) for s in lists) or lists[0] != lists[1]:
        return fail(f"solver lists differ or repeat: {lists}")
    if not BUILT_IN <= set(lists[0]):
        return fail(f"not every built-in solver ran: {lists[0]}")
    if "side by side" not in p.stderr:
        return fail("no side-by-side summary on stderr")
    if q.returncode != 2 or "nosuch" not in q.stderr:
        return fail(f"an unknown solver gave status {q.returncode}: {q.stderr}")
    print(f"check_bench_fclib: {len(rows)} rows, solvers {', '.join(lists[0])}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
