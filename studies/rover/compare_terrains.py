#!/usr/bin/env python3
"""The rover's crossing on every terrain formulation, one table and one figure
(docs/rover.md, "Every terrain side by side").

Runs rover_obstacle on the rigid, SCM and Bekker-Wong scenes (each with its
own settings, one thread), reads the granular full bed's recorded event table
(bench/results/c-2core/rover_fullbed_hex_crossing2_events.txt: its run takes
2 h 47 min and is not repeated), and writes

  FIG/rover_terrains.md   the table (markdown)
  FIG/rover_terrains.csv  the same, one row per formulation
  FIG/rover_terrains.svg  the right-hand wheels' vertical loads over travel

usage: compare_terrains.py [--build BUILD] [--runs DIR] [--figures FIG] [--reuse]
  --build   the build directory (default build-release)
  --runs    where the runs go (default out/rover_terrains)
  --figures where the table and figure go (default docs/figures)
  --reuse   analyse the runs already in --runs (their wall times from run.log)
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# name, scene (examples/scenes), label, line colour
FORMULATIONS = [
    ("rigid", "rover_obstacle_rigid.json", "rigid ground (DVI, Lemke)", "#222222"),
    ("scm", "rover_obstacle_scm.json", "SCM soil", "#d62728"),
    ("bekker_wong", "rover_obstacle_bekker_wong.json", "Bekker-Wong wheels", "#1f77b4"),
]
GRANULAR_EVENTS = "bench/results/c-2core/rover_fullbed_hex_crossing2_events.txt"
GRANULAR_WALL = 10039.0  # s for its 19.4 s: 2 h 47 min on two threads (RECORD.md, "The full bed: the crossing")
GRANULAR_SINKAGE = "0.2-1.1 cm (strip)"  # RECORD.md, granular ground: the hexagonal strip
WHEELS = ["wheel_RF", "wheel_RM", "wheel_RB"]
RIM_SPEED = 0.08889 * 0.25  # m/s, the thesis's wheel speed after the 1 s ramp

EVENT = re.compile(r"^(front|middle|rear) climbs\s+(\S+)\s+(\S+)s\s+(\S+)s\s+(\S+)s\s+(\S+)%\s+(\S+)\s+(\S+)\s+(.*)$")
PEAK = re.compile(r"^(wheel_R[FMB])\s+(\S+)\s+(\S+)\s+(\S+)$")
TRAVEL = re.compile(r"^travel (\S+) m in (\S+) s; crossing time .* (\S+) s$")
STEPS = re.compile(r"steps in (\S+) s")
CLIMB = re.compile(r"^\s+climb starts at t = (\S+) s; predicted .* error (\S+) s(?: = (\S+) % of the crossing)?$")
PHASE = re.compile(r"^(front|middle|rear) climbs\s+pattern (yes|NO)\s+(.*)$")


def parse_report(text):
    """The event table, peaks and travel of rover_obstacle's report."""
    out = {"events": {}, "peaks": {}, "travel": None, "duration": None, "crossing": None, "wall": None,
           "climbs": [], "phases": {}}
    for line in text.splitlines():
        m = CLIMB.match(line)
        if m:
            out["climbs"].append({"t": float(m.group(1)), "error": float(m.group(2)),
                                  "error_pct": float(m.group(3)) if m.group(3) else float("nan")})
        m = PHASE.match(line)
        if m:
            out["phases"][m.group(1)] = {"pattern": m.group(2) == "yes", "why": m.group(3).strip()}
        m = EVENT.match(line)
        if m:
            out["events"][m.group(1)] = {"predicted": float(m.group(3)), "found": float(m.group(4)),
                                         "error": float(m.group(5)), "error_pct": float(m.group(6)),
                                         "on_time": m.group(7) == "yes", "pattern": m.group(8) == "yes",
                                         "why": m.group(9).strip()}
        m = PEAK.match(line)
        if m:
            out["peaks"][m.group(1)] = float(m.group(4))
        m = TRAVEL.match(line)
        if m:
            out["travel"], out["duration"] = float(m.group(1)), float(m.group(2))
            out["crossing"] = float(m.group(3))
        m = STEPS.search(line)
        if m:
            out["wall"] = float(m.group(1))
    return out


def read_csv(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = [h.split(" [")[0] for h in next(r)]
        rows = [[float(x) for x in row] for row in r if row]
    return head, rows


def column(head, rows, name):
    k = head.index(name)
    return [row[k] for row in rows]


def run_one(build, runs, name, scene, reuse):
    d = os.path.join(runs, name)
    log = os.path.join(d, "run.log")
    if not reuse:
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        cmd = [os.path.join(build, "studies", "rover", "rover_obstacle"),
               os.path.join(ROOT, "examples", "scenes", scene), "--out", d, "--quiet"]
        print("running", " ".join(cmd), file=sys.stderr)
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(log, "w") as f:
            f.write(p.stdout)
    with open(log) as f:
        rep = parse_report(f.read())
    # the crossing side's vertical loads and the chassis's travel, sinkage and slip from the CSVs
    h, rows = read_csv(os.path.join(d, "crossing_side_up.csv"))
    t = column(h, rows, "time")
    up = {w: column(h, rows, w + ".f_up") for w in WHEELS}
    hp, prow = read_csv(os.path.join(d, "chassis_position.csv"))
    x = column(hp, prow, "chassis.x")
    travel = [xi - x[0] for xi in x]
    sink = None
    soil = os.path.join(d, "crossing_side_soil.csv")
    if os.path.exists(soil):
        hs, srow = read_csv(soil)
        vals = [v for w in WHEELS for ti, v in zip(column(hs, srow, "time"), column(hs, srow, w + ".sinkage"))
                if ti >= 2.0]
        sink = sum(vals) / len(vals) if vals else None
    T = rep["duration"]
    rim = RIM_SPEED * (T - 0.5)  # the rim's path with the 1 s linear ramp
    rep["slip"] = travel[-1] / rim - 1.0 if rim > 0 else None
    rep["sinkage"] = sink if sink is not None else 0.0
    rep["series"] = (t, travel, up)
    with open(os.path.join(d, "events.json")) as f:
        loads = json.load(f)["static_loads"]
    rep["static"] = dict(zip(WHEELS, loads[3:6]))
    return rep


def granular():
    with open(os.path.join(ROOT, GRANULAR_EVENTS)) as f:
        rep = parse_report(f.read())
    rep["wall"] = GRANULAR_WALL
    rep["slip"] = None
    rep["sinkage"] = None
    rep["series"] = None
    return rep


def fmt_event(rep, k, ev):
    """One event's cell: the wheel centre's climb against the prediction, the
    phase means' pattern, the load excursion's timing."""
    parts = []
    c = rep["climbs"][k] if k < len(rep["climbs"]) else None
    if c and c["t"] == c["t"]:
        parts.append("climbs %s" % ("%+.2f %%" % c["error_pct"] if c["error_pct"] == c["error_pct"]
                                    else "%+.1f s" % c["error"]))
    else:
        parts.append("no climb")
    ph = rep["phases"].get(ev)
    if ph:
        parts.append("phase means %s (%s)" % ("yes" if ph["pattern"] else "no", ph["why"].replace(" x", " ×")))
    e = rep["events"].get(ev)
    if e and e["found"] == e["found"]:
        parts.append("load excursion %s, pattern %s" % (
            "%+.2f %%" % e["error_pct"] if e["error_pct"] == e["error_pct"] else "%+.1f s" % e["error"],
            "yes" if e["pattern"] else "no"))
    else:
        parts.append("no load excursion")
    return "; ".join(parts)


def write_table(figs, results):
    rows = []
    for name, label, rep in results:
        wall = rep["wall"] / rep["duration"] if rep["wall"] and rep["duration"] else float("nan")
        rows.append({
            "formulation": name, "label": label, "duration_s": rep["duration"], "travel_m": rep["travel"],
            "crossing_s": rep["crossing"],
            **{"%s_%s" % (ev, k): (rep["events"].get(ev) or {}).get(k, float("nan"))
               for ev in ("front", "middle", "rear") for k in ("predicted", "found", "error", "error_pct")},
            **{"%s_pattern" % ev: (rep["events"].get(ev) or {}).get("pattern", False)
               for ev in ("front", "middle", "rear")},
            **{"%s_climb_error_pct" % ev: (rep["climbs"][k]["error_pct"] if k < len(rep["climbs"]) else float("nan"))
               for k, ev in enumerate(("front", "middle", "rear"))},
            **{"%s_phase_pattern" % ev: (rep["phases"].get(ev) or {}).get("pattern", False)
               for ev in ("front", "middle", "rear")},
            **{"peak_%s" % w[-2:]: rep["peaks"].get(w, float("nan")) for w in WHEELS},
            "sinkage_m": rep["sinkage"], "slip": rep["slip"], "wall_s_per_sim_s": wall,
            "_rep": rep,
        })
    with open(os.path.join(figs, "rover_terrains.csv"), "w", newline="") as f:
        keys = [k for k in rows[0] if not k.startswith("_") and k != "label"]
        w = csv.writer(f, lineterminator="\n")
        w.writerow(keys)
        for r in rows:
            w.writerow(["" if r[k] is None else ("%.6g" % r[k] if isinstance(r[k], float) else r[k]) for k in keys])
    lines = ["| formulation | run | front climbs | middle climbs | rear climbs | peak / static RF, RM, RB | "
             "sinkage | slip | wall s per simulated s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rep = r["_rep"]
        run = "%.3f m in %.1f s" % (rep["travel"], rep["duration"])
        sink = "-" if r["sinkage_m"] is None else "%.1f mm" % (1e3 * r["sinkage_m"])
        if r["formulation"] == "granular_full_bed":
            sink = GRANULAR_SINKAGE
        slip = "-" if r["slip"] is None else "%.2f" % r["slip"]
        lines.append("| %s | %s | %s | %s | %s | %.2f, %.2f, %.2f | %s | %s | %.3g |" % (
            r["label"], run, *(fmt_event(rep, k, ev) for k, ev in enumerate(("front", "middle", "rear"))),
            r["peak_RF"], r["peak_RM"], r["peak_RB"], sink, slip, r["wall_s_per_sim_s"]))
    with open(os.path.join(figs, "rover_terrains.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_svg(figs, results, reach):
    W, H, L, R, T, B, GAP = 900, 670, 70, 20, 50, 50, 30
    ph = (H - T - B - 2 * GAP) / 3
    xmax = 3.6
    ymin, ymax = 0.0, 2.5
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">Right-hand wheels: vertical load / static over the rover\'s travel, '
           '0.5 s means, one line per formulation</text>' % L]
    names = ["front (RF)", "middle (RM)", "rear (RB)"]
    for k, w in enumerate(WHEELS):
        y0 = T + k * (ph + GAP)
        sx = lambda v: L + (W - L - R) * v / xmax
        sy = lambda v: y0 + ph * (1 - (min(max(v, ymin), ymax) - ymin) / (ymax - ymin))
        out.append('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="none" stroke="#888"/>' % (L, y0, W - L - R, ph))
        for v in (0.5, 1.0, 1.5, 2.0):
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, sy(v), sy(v)))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (L - 5, sy(v) + 4, v))
        for d in reach[k]:
            out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4,3"/>' %
                       (sx(d), sx(d), y0, y0 + ph))
        out.append('<text x="%d" y="%.1f">%s</text>' % (L + 6, y0 + 14, names[k]))
        for name, label, rep, colour in results:
            if not rep["series"]:
                continue
            t, travel, up = rep["series"]
            static = rep["static"][w]
            pts = []
            j0 = 0
            for i in range(len(t)):  # centred 0.5 s means, one point in five
                while t[j0] < t[i] - 0.25:
                    j0 += 1
                if i % 5:
                    continue
                j1, s, n = j0, 0.0, 0
                while j1 < len(t) and t[j1] <= t[i] + 0.25:
                    s += up[w][j1]
                    n += 1
                    j1 += 1
                if travel[i] <= xmax:
                    pts.append("%.1f,%.1f" % (sx(travel[i]), sy(s / n / static)))
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/>' % (colour, " ".join(pts)))
    yb = H - B + 18
    for v in range(0, 4):
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (L + (W - L - R) * v / xmax, yb - 4, v))
    out.append('<text x="%d" y="%d" text-anchor="middle">travel of the chassis (m); dashed: where the wheel reaches, '
               'tops and leaves the obstacle on rigid ground</text>' % (L + (W - L - R) / 2, yb + 12))
    xl = L + 10
    for name, label, rep, colour in results:
        if rep["series"]:
            out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (xl, xl + 20, 36, 36, colour))
            out.append('<text x="%d" y="40">%s</text>' % (xl + 24, label))
            xl += 40 + 7 * len(label)
    out.append("</svg>")
    with open(os.path.join(figs, "rover_terrains.svg"), "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-release"))
    ap.add_argument("--runs", default=os.path.join(ROOT, "out", "rover_terrains"))
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--reuse", action="store_true")
    a = ap.parse_args()
    results = []
    for name, scene, label, colour in FORMULATIONS:
        rep = run_one(a.build, a.runs, name, scene, a.reuse)
        if rep["travel"] is None:
            print("compare_terrains: %s: no report (see %s/%s/run.log)" % (name, a.runs, name), file=sys.stderr)
            return 1
        results.append((name, label, rep, colour))
    g = granular()
    table = [(n, l, r) for n, l, r, _ in results] + [("granular_full_bed", "granular full bed (53,728 spheres, "
                                                     "0.8 rad/s, recorded)", g)]
    os.makedirs(a.figures, exist_ok=True)
    write_table(a.figures, table)
    reach = [(0.193, 0.505, 0.817), (1.377, 1.689, 2.001), (2.451, 2.763, 3.075)]
    write_svg(a.figures, results, reach)
    with open(os.path.join(a.figures, "rover_terrains.md")) as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
