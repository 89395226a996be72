#!/usr/bin/env python3
"""Markdown tables of docs/fclib.md from `bench_fclib --json` output (one
JSON object per (problem, solver), as in bench/results/fclib_coulomb.jsonl).

usage: fclib_table.py ROWS.jsonl [SOLVER,SOLVER,...]

With a list of solvers, the first table has only their columns.

Prints three tables:
1. every solver on every problem (problems in the order of the rows): a cell
   is "✓" or "✗" (solved by the solver's law), iterations, the CCP residual /
   the Coulomb residual, the time; "—" where the solver refused the problem;
2. per family and solver: problems solved, Coulomb residual within the
   tolerance;
3. when the rows hold solvers of Coulomb's law of both libraries, the side
   by side: per problem, each of ours against each reference solver, as
   "✓/✗ ours vs ✓/✗ theirs" and the time ratio ours / theirs where both
   solved it."""
import json
import sys


def fmt_time(s):
    if s is None:
        return "—"
    if s >= 1.0:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_res(x):
    if x is None:
        return "nan"
    return "0" if x == 0 else f"{x:.1e}"


def cell(r):
    if r["status"] == "unsupported":
        return "—"
    mark = "✓" if r["solved"] else "✗"
    return f"{mark} {r['iterations']} it, {fmt_res(r['residual_ccp'])} / {fmt_res(r['residual_coulomb'])}, " \
           f"{fmt_time(r['seconds'])}"


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    problems, solvers = [], []
    by = {}
    for r in rows:
        if r["problem"] not in by:
            problems.append(r["problem"])
            by[r["problem"]] = {}
        if r["solver"] not in solvers:
            solvers.append(r["solver"])
        by[r["problem"]][r["solver"]] = r
    first = rows[0]
    columns = sys.argv[2].split(",") if len(sys.argv) > 2 else solvers
    print(f"Tolerance {first['tolerance']:g}, at most {first['max_iterations']} iterations, "
          f"{first['threads']} thread(s). Cell: solved?, iterations, CCP residual / Coulomb residual, time.\n")
    print("| problem | kind | contacts | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for p in problems:
        any_row = next(iter(by[p].values()))
        cells = [cell(by[p][s]) if s in by[p] else "" for s in columns]
        print(f"| {p} | {any_row['kind']} | {any_row['contacts']} | " + " | ".join(cells) + " |")

    print("\nPer family: problems solved by the solver's law / Coulomb residual within the tolerance.\n")
    families = []
    for r in rows:
        if r["family"] not in families:
            families.append(r["family"])
    print("| family | problems | " + " | ".join(solvers) + " |")
    print("|---|---|" + "---|" * len(solvers))
    totals = {s: [0, 0, 0] for s in solvers}
    for fam in families:
        fr = [r for r in rows if r["family"] == fam]
        n = len({r["problem"] for r in fr})
        cells = []
        for s in solvers:
            sr = [r for r in fr if r["solver"] == s]
            solved = sum(r["solved"] for r in sr)
            cok = sum(r["coulomb_ok"] for r in sr)
            totals[s][0] += solved
            totals[s][1] += cok
            totals[s][2] += len(sr)
            cells.append(f"{solved} / {cok}")
        print(f"| {fam} | {n} | " + " | ".join(cells) + " |")
    print(f"| **all** | {len(problems)} | " +
          " | ".join(f"**{totals[s][0]} / {totals[s][1]}**" for s in solvers) + " |")

    ours = [s for s in solvers if not s.startswith("siconos:") and
            any(r["law"] == "coulomb" for r in rows if r["solver"] == s)]
    refs = [s for s in solvers if s.startswith("siconos:")]
    if not ours or not refs:
        return 0
    print("\nSide by side (Coulomb residual within the tolerance): ours vs the reference's, and the time ratio "
          "ours / theirs where both solved the problem.\n")
    heads = [f"{o} vs {t}" for o in ours for t in refs]
    print("| problem | contacts | " + " | ".join(heads) + " |")
    print("|---|---|" + "---|" * len(heads))
    for p in problems:
        cells = []
        for o in ours:
            for t in refs:
                a, b = by[p].get(o), by[p].get(t)
                if not a or not b:
                    cells.append("")
                    continue
                c = f"{'✓' if a['solved'] else '✗'} vs {'✓' if b['solved'] else '✗'}"
                if a["solved"] and b["solved"] and b["seconds"]:
                    c += f", ×{a['seconds'] / b['seconds']:.2g}"
                cells.append(c)
        any_row = next(iter(by[p].values()))
        print(f"| {p} | {any_row['contacts']} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
