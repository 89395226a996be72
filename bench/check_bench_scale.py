#!/usr/bin/env python3
"""Runs `bench_scale --quick --json` and checks its output: it exits with 0,
every line is a JSON object, and the measured rows (kind "dvi" and "dem")
carry the keys of docs/benchmarks.md ("Scale: the full bed") with finite
numbers (null only where a figure does not apply). Then runs it with
`--convergence` and checks the time-to-a-residual rows: one per solver and
tolerance, each with its iterations within the cap, a finite residual, a
status that agrees with the residual, and a time. Last runs it with
`--contended` (no DEM bed) and checks that each DVI row comes twice, idle
and beside the competing load ("contended" false and true), with the
measured steps on fewer threads ("fallback_steps") between 0 and the
steps."""
import json
import math
import subprocess
import sys

REQUIRED = ["scene", "bodies", "contacts", "threads", "ms_per_step", "ms_collide", "ms_assemble", "ms_solve",
            "ms_integrate", "iterations", "residual", "rss_mb", "bytes_per_contact_iter", "bandwidth_gbs",
            "bandwidth_ratio"]
# null allowed: DEM rows have no CCP solve, so no bytes per contact-iteration and no ratio
NULLABLE = {"dem": {"bytes_per_contact_iter", "bandwidth_ratio"}, "dvi": set()}


def run(args):
    """Runs bench_scale with args, echoes its output; None if it failed."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=880)
    sys.stderr.write(p.stderr)
    print(p.stdout, end="")
    if p.returncode != 0:
        print(f"bench_scale {' '.join(args[1:])} exited with {p.returncode}")
        return None
    return p


def main():
    exe = sys.argv[1]
    p = run([exe, "--quick", "--json"])
    if p is None:
        return 1
    kinds = {}
    threads = {"dvi": set(), "dem": set()}
    for n, line in enumerate(p.stdout.splitlines(), 1):
        try:
            row = json.loads(line)
        except ValueError as e:
            print(f"line {n}: not JSON: {e}")
            return 1
        kind = row.get("kind")
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind not in ("dvi", "dem"):
            continue
        threads[kind].add(row.get("threads"))
        for key in REQUIRED:
            if key not in row:
                print(f"line {n}: no key {key}")
                return 1
            v = row[key]
            if key == "scene":
                if not isinstance(v, str) or not v:
                    print(f"line {n}: scene is not a name")
                    return 1
            elif v is None:
                if key not in NULLABLE[kind]:
                    print(f"line {n}: {key} is null")
                    return 1
            elif not isinstance(v, (int, float)) or not math.isfinite(v):
                print(f"line {n}: {key} = {v!r} is not a finite number")
                return 1
        if row["ms_per_step"] <= 0 or row["bodies"] <= 0:
            print(f"line {n}: no time or no bodies")
            return 1
    for kind in ("machine", "bandwidth", "settle", "dvi", "dem"):
        if kinds.get(kind, 0) == 0:
            print(f"no row of kind {kind}")
            return 1
    if threads["dvi"] != {1, 2} or threads["dem"] != {1, 2}:
        print(f"expected rows with 1 and 2 threads, got {threads}")
        return 1
    print(f"ok: {kinds}")
    return check_convergence(exe) or check_contended(exe)


def check_contended(exe):
    p = run([exe, "--quick", "--json", "--contended", "--dem-spheres", "0"])
    if p is None:
        return 1
    seen = set()
    for n, line in enumerate(p.stdout.splitlines(), 1):
        row = json.loads(line)
        if row.get("kind") != "dvi":
            continue
        c, f = row.get("contended"), row.get("fallback_steps")
        if not isinstance(c, bool) or not isinstance(f, int) or not 0 <= f <= row["steps"]:
            print(f"line {n}: contended = {c!r}, fallback_steps = {f!r}")
            return 1
        if row["threads"] == 1 and f != 0:
            print(f"line {n}: a row on one thread with fallback steps")
            return 1
        seen.add((row["threads"], c))
    if seen != {(1, False), (1, True), (2, False), (2, True)}:
        print(f"--contended: expected rows on 1 and 2 threads, idle and contended, got {sorted(seen)}")
        return 1
    print("ok: --contended")
    return 0


def check_convergence(exe):
    cap = 100
    p = run([exe, "--quick", "--json", "--convergence", "--max-iterations", str(cap), "--threads", "2",
             "--dem-spheres", "0"])
    if p is None:
        return 1
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    conv = [r for r in rows if r.get("kind") == "convergence"]
    if any(r.get("kind") in ("dvi", "dem") for r in rows):
        print("--convergence printed step rows")
        return 1
    seen = {(r["solver"], r["tolerance"]) for r in conv}
    if len(conv) != 10 or len(seen) != 10:
        print(f"expected 10 convergence rows (5 solvers x 2 tolerances), got {len(conv)}")
        return 1
    for r in conv:
        it, res, tol = r["iterations"], r["residual"], r["tolerance"]
        if not (0 <= it <= cap) or not math.isfinite(res) or not (r["ms_solve"] >= 0):
            print(f"convergence row {r}: iterations, residual or time out of range")
            return 1
        if r["status"] == "converged" and not res <= tol:
            print(f"convergence row {r}: converged above its tolerance")
            return 1
        if r["status"] == "max_iter" and it != cap:
            print(f"convergence row {r}: stopped at {it} of {cap} iterations without converging")
            return 1
    print(f"ok: {len(conv)} convergence rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
