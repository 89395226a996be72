#!/usr/bin/env python3
"""The model of docs/scale.md: a DEM step of 10^7 spheres over 64 and 1,024
ranks, from bench_mpi's measured rows and a stated network.

    python3 tools/scale_model.py ROWS.jsonl [--bandwidth GBps] [--latency us] [--spheres N]

ROWS.jsonl: `bench_mpi --json` rows (one JSON object a line) of one bed at 1,
2 and 4 ranks. Prints a Markdown table.

What is measured and what is assumed:
  t_body   compute per local body per step (ms_per_step / bodies of the
           1-rank row: collision, forces, integration of one rank's world);
  g_face   ghosts per face across the bed (two levels), from the 2-rank
           row (two halves: one face each); it scales with the face's length
           (the beds are square, 4 layers deep, so a face of a bed of N
           spheres is sqrt(N / N_row) times the measured one). The 4-rank
           row (a 2 x 2 grid on a square bed: each cell has two half faces)
           is the check: it should hold about g_face ghosts per rank;
  halo     104 bytes a ghost (13 doubles) and one message per face;
  rebuilds their measured bytes per step, scaled like the halo;
  reduce   two all-reductions a step, each 2 log2(P) latencies (recursive
           doubling) plus its bytes;
  network  a bandwidth (default 10 GB/s a link) and a latency (2 us).
The efficiency is owned / (owned + ghosts + T_comm / t_body): the fraction
of a rank's time spent on its own bodies. Slabs: P x 1; grid: sqrt(P) x sqrt(P)
cells, each with four faces of its own side (what src/dist chooses for a
square bed).
"""
import json
import math
import sys


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    bw, lat, total = 10.0, 2.0, 1e7
    path = args[0]
    i = 1
    while i < len(args):
        if args[i] == "--bandwidth":
            bw = float(args[i + 1]); i += 2
        elif args[i] == "--latency":
            lat = float(args[i + 1]); i += 2
        elif args[i] == "--spheres":
            total = float(args[i + 1]); i += 2
        else:
            print(f"scale_model.py: unknown argument {args[i]}", file=sys.stderr)
            return 2
    rows = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    one = [r for r in rows if r["ranks"] == 1]
    many = [r for r in rows if r["ranks"] > 1]
    if not one or not many:
        print("scale_model.py: need a 1-rank row and at least one row with more ranks", file=sys.stderr)
        return 1
    n_row = one[0]["bodies"]
    t_body = one[0]["ms_per_step"] / n_row * 1e-3  # s per body-step
    two = [r for r in many if r["ranks"] == 2]
    if not two:
        print("scale_model.py: need a 2-rank row", file=sys.stderr)
        return 1
    g_face = two[0]["ghosts"]
    for r in many:
        if r["ranks"] == 4 and r.get("grid", "auto") != "slabs":
            print(f"check: 4 ranks (2 x 2) hold {r['ghosts']:,.0f} ghosts a rank; the model says {g_face:,.0f} "
                  f"plus the corners")
    rebuild_per_ghost = sum(r["bytes_rebuild"] / max(r["ghosts"], 1) for r in many) / len(many)
    print(f"measured: {n_row:,} bodies, t_body = {t_body * 1e6:.2f} us per body-step (1 rank), "
          f"g_face = {g_face:,.0f} ghosts per face, rebuild traffic {rebuild_per_ghost:.1f} B per ghost per step")
    print(f"network: {bw:g} GB/s, {lat:g} us latency; {total:,.0f} spheres\n")
    print("| decomposition | ranks | owned | ghosts | halo B/step | halo messages | T_compute ms | T_comm ms | efficiency |")
    print("|---|---|---|---|---|---|---|---|---|")
    scale = math.sqrt(total / n_row)  # a face of the large square bed against the measured one
    for P in (64, 1024):
        owned = total / P
        for kind in ("slabs", "grid"):
            if kind == "slabs":
                face = g_face * scale
                nfaces = 2
            else:
                k = math.sqrt(P)
                face = g_face * scale / k
                nfaces = 4
            ghosts = min(nfaces * face, total - owned)
            # slabs thinner than the ghost layers: the ghosts reach past the neighbours
            thickness = owned / (g_face * scale) if kind == "slabs" else owned / face
            halo = 104.0 * ghosts
            reach = math.ceil(face / owned)  # ranks a ghost layer spans
            msgs = nfaces * reach
            t_comm = (msgs * lat * 1e-6 + halo / (bw * 1e9)
                      + 2 * 2 * math.log2(P) * lat * 1e-6
                      + rebuild_per_ghost * ghosts / (bw * 1e9))
            t_comp = t_body * (owned + ghosts)
            eff = owned / (owned + ghosts + t_comm / t_body)
            note = "" if thickness >= 1.0 else " (slabs thinner than the ghost layers)"
            print(f"| {kind}{note} | {P:,} | {owned:,.0f} | {ghosts:,.0f} | {halo:,.0f} | {msgs} | "
                  f"{t_comp * 1e3:.1f} | {t_comm * 1e3:.3f} | {eff:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
