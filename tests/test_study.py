#!/usr/bin/env python3
"""`dvi study` end to end on a tiny scene (four spheres resting on a slab).

Usage: test_study.py DVI_EXE

A two-step ladder per method (DVI: 2 ms and 4 ms; DEM at E = 1e8 Pa: 40 us,
which holds, and 5 ms, whose springs are unstable), the observable the slab's mean load
over [0.2, 0.3] s. Checks:
  - the table: study.csv and study.json have one row per run with the keys
    of docs/study.md, the 5 ms DEM run is "unstable", the others acceptable;
    study.svg is an SVG picture;
  - the summary: the largest acceptable step is 4 ms for DVI and 40 us for
    DEM (the 5 ms run above it failed);
  - the same table (times excepted) with one run at a time;
  - --resume skips the finished runs (no run starts, the run directories
    are left as they are), and a changed setting runs them again;
  - SIGINT stops a study and its runs cleanly at any point (exit 130, the
    runs "interrupted" with their checkpoints), and --resume completes it
    with the table of a study never interrupted, also when a run directory
    lost its summary.json or checkpoint or has them damaged (the stops are
    raised by the study itself at set points, DVI_STUDY_INTERRUPT: no timing);
  - a scene without a study object (examples/scenes/sliding_box.json): the
    ladders chosen from the scene (DVI: its step x 2^k while the runs are
    acceptable; DEM: the stiffest contact's critical step, 9.7e-4 s, and its
    halves), printed and recorded; a scene whose bodies start apart has no
    DEM ladder to choose: exit 2, the place named;
  - bad settings exit 2 with a message naming the place: an unknown probe
    column, a non-positive step (command line and scene file), an unknown
    method, an unknown key of the study object; nothing is run. dvi check
    finds the same problems in the scene's study object, and describes a
    good one.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DVI = os.path.abspath(sys.argv[1])

SCENE = {
    "name": "tiny_study",
    "units": "SI",
    "gravity": [0, 0, -9.81],
    "materials": {"glass": {"friction": 0.4, "restitution": 0, "young_modulus": 1e7}},
    "bodies": [{"name": "slab", "type": "fixed", "shapes": [
        {"type": "box", "half_extents": [0.1, 0.1, 0.02], "position": [0, 0, -0.02], "material": "glass"}]}],
    "generators": [{"type": "granular_bed", "name": "grains",
                    "region": {"min": [-0.05, -0.05, 0.0], "max": [0.05, 0.05, 0.05]},
                    "radius": 0.02, "gap": 0.005, "density": 2500, "material": "glass", "max_count": 4}],
    "formulation": {"method": "dvi", "dt": 0.002, "tolerance": 1e-6, "max_iterations": 200},
    "duration": 0.3,
    "probes": [{"name": "load", "what": "contact_force", "component": [0, 0, -1], "body": "slab", "every": 5}],
    "study": {"dts": {"dvi": [0.004, 0.002], "dem": [4e-5, 5e-3]}, "young_moduli": [1e8],
              "observable": {"column": "load.slab.f_dir", "window": [0.2, 0.3], "relative_tolerance": 0.01}},
}
ROW_KEYS = {"method", "dt", "young_modulus", "status", "reason", "not_converged_steps", "max_penetration",
            "penetration_fraction",
            "observable", "error", "reference", "wall_seconds", "wall_per_simulated_second", "cpu_seconds",
            "cpu_per_simulated_second", "acceptable"}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, cwd):
    p = subprocess.run([DVI] + args, cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def near(a, b):
    return a is not None and abs(a - b) <= 1e-12 * abs(b)


with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "tiny.json")
    with open(scene, "w") as f:
        json.dump(SCENE, f)
    out = os.path.join(tmp, "study")

    rc, so, se = run(["study", scene, "--out", out, "--jobs", "2"], tmp)
    check(rc == 0, "study exits 0 (got %d): %s" % (rc, se))
    table = json.load(open(os.path.join(out, "study.json")))
    rows = table["runs"]
    check(len(rows) == 4, "4 runs in study.json (got %d)" % len(rows))
    for r in rows:
        check(set(r) == ROW_KEYS, "row keys %s" % sorted(r))
    by = {(r["method"], r["dt"]): r for r in rows}
    check(set(by) == {("dvi", 0.004), ("dvi", 0.002), ("dem", 4e-5), ("dem", 5e-3)}, "the runs: %s" % sorted(by))
    bad = by.get(("dem", 5e-3), {})
    check(bad.get("status") == "unstable" and not bad.get("acceptable"), "DEM at 5 ms is unstable: %s" % bad)
    # (its springs are unstable; with the normal dashpot limited to the step the energy grows without
    # tripping the guard within the run: the health monitor's energy and escape findings are the reason)
    check("blow-up" in bad.get("reason", "") or "energy" in bad.get("reason", ""),
          "its reason names the blow-up or the energy gain: %s" % bad.get("reason"))
    for key in [("dvi", 0.004), ("dvi", 0.002), ("dem", 4e-5)]:
        r = by.get(key, {})
        check(r.get("status") == "stable" and r.get("acceptable") is True, "%s acceptable: %s" % (key, r))
        check(r.get("observable") is not None and abs(r["observable"] - 4 * 0.0838 * 9.81) < 0.02 * 3.29,
              "%s observable is the grains' weight (3.29 N): %s" % (key, r.get("observable")))
    check(by.get(("dvi", 0.002), {}).get("reference") is True, "the finest DVI run is the reference")
    check(near(by.get(("dem", 4e-5), {}).get("young_modulus"), 1e8), "DEM rows carry E")
    check(by.get(("dvi", 0.002), {}).get("young_modulus") is None, "DVI rows have no E (null)")
    best = {(b["method"], b["young_modulus"]): b for b in table["largest_acceptable"]}
    check(near(best.get(("dvi", None), {}).get("dt"), 0.004), "largest acceptable DVI step 4 ms: %s" % best)
    check(near(best.get(("dem", 1e8), {}).get("dt"), 4e-5), "largest acceptable DEM step 40 us: %s" % best)
    check(best.get(("dem", 1e8), {}).get("wall_per_simulated_second", 0) > 0, "its cost is given")
    check(all(r["cpu_seconds"] is not None and r["cpu_seconds"] >= 0 for r in rows), "every run's CPU time is given")
    with open(os.path.join(out, "study.csv")) as f:
        crows = list(csv.DictReader(f))
    check(len(crows) == 4, "4 rows in study.csv")
    check(crows and crows[0]["method"] == "dvi" and float(crows[0]["dt [s]"]) == 0.004,
          "the CSV lists each ladder from its largest step")
    check(sum(int(r["acceptable"]) for r in crows) == 3, "3 acceptable rows in the CSV")
    svg = ET.parse(os.path.join(out, "study.svg")).getroot()
    check(svg.tag.endswith("svg") and len(svg.findall(".//{http://www.w3.org/2000/svg}circle")) >= 3,
          "study.svg is a picture with the runs' points")
    check("largest acceptable step 0.004 s" in so and "largest acceptable step 4e-05 s" in so,
          "the summary is printed: %s" % so)

    # deterministic: one run at a time gives the same table (times excepted)
    rc, so1, se = run(["study", scene, "--out", os.path.join(tmp, "serial"), "--jobs", "1"], tmp)
    serial = json.load(open(os.path.join(tmp, "serial", "study.json")))
    same = lambda t: [(r["method"], r["dt"], r["status"], r["max_penetration"], r["observable"], r["error"],
                       r["acceptable"]) for r in t["runs"]]
    check(rc == 0 and same(serial) == same(table), "--jobs 1 gives the same table as --jobs 2")

    # --resume: nothing runs again
    stamps = {d: os.stat(os.path.join(out, "runs", d, "summary.json")).st_mtime_ns
              for d in os.listdir(os.path.join(out, "runs"))}
    rc, so2, se = run(["study", scene, "--out", out, "--resume"], tmp)
    check(rc == 0, "--resume exits 0: %s" % se)
    check("4 of 4 runs already done" in se and "done (exit" not in se, "--resume skips the finished runs: %s" % se)
    check(stamps == {d: os.stat(os.path.join(out, "runs", d, "summary.json")).st_mtime_ns for d in stamps},
          "--resume leaves the run directories alone")
    table2 = json.load(open(os.path.join(out, "study.json")))
    check([(r["method"], r["dt"], r["acceptable"], r["observable"]) for r in table2["runs"]] ==
          [(r["method"], r["dt"], r["acceptable"], r["observable"]) for r in rows], "--resume gives the same table")
    # a changed setting is not a finished run of these settings
    rc, so3, se = run(["study", scene, "--out", out, "--resume", "--methods", "dvi", "--duration", "0.25",
                       "--window", "0.2,0.25"], tmp)
    check(rc == 0 and "0 of 2 runs already done" in se, "--resume reruns runs of other settings: %s" % se)

    # an interrupted study: a stop at any point (DVI_STUDY_INTERRUPT makes the study raise SIGINT on itself
    # there, so the test checks the same thing on a fast or a loaded machine) exits 130 and leaves every run
    # it started with a summary.json ("interrupted", with its checkpoint, or "finished"); --resume then
    # completes the study with the table of a study never interrupted (the runs continue bit-identically)
    def study_args(out_dir, jobs):
        return ["study", scene, "--out", out_dir, "--methods", "dem", "--dts-dem", "4e-5,5e-5", "--young-moduli",
                "1e8", "--duration", "0.3", "--window", "0.2,0.3", "--jobs", str(jobs)]

    def verdicts(out_dir):
        t = json.load(open(os.path.join(out_dir, "study.json")))
        return [(r["dt"], r["status"], r["acceptable"], r["max_penetration"], r["observable"]) for r in t["runs"]]

    def summaries(out_dir):
        d = os.path.join(out_dir, "runs")
        names = sorted(os.listdir(d)) if os.path.isdir(d) else []
        return {n: json.load(open(os.path.join(d, n, "summary.json"))) for n in names}

    rc, so, se = run(study_args(os.path.join(tmp, "whole"), 2), tmp)
    whole = verdicts(os.path.join(tmp, "whole"))
    check(rc == 0 and [(v[1], v[2]) for v in whole] == [("stable", True)] * 2, "the uninterrupted study: %s" % whole)
    # (point, jobs, the runs' states after the stop)
    points = [("start", 2, {}),
              ("spawn", 2, {"dem_E1e+08_dt4e-05": "interrupted"}),
              ("step:2000", 2, {"dem_E1e+08_dt4e-05": "interrupted", "dem_E1e+08_dt5e-05": "interrupted"}),
              ("ended:1", 1, {"dem_E1e+08_dt4e-05": "finished"})]
    for point, jobs, expect in points:
        out_p = os.path.join(tmp, "stop_" + point.replace(":", "_"))
        p = subprocess.run([DVI] + study_args(out_p, jobs), cwd=tmp, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, DVI_STUDY_INTERRUPT=point))
        check(p.returncode == 130, "%s: an interrupted study exits 130 (got %d): %s" % (point, p.returncode, p.stderr))
        sums = summaries(out_p)
        check({n: r["status"] for n, r in sums.items()} == expect,
              "%s: the runs it started stopped cleanly: %s" % (point, {n: r["status"] for n, r in sums.items()}))
        check(all(os.path.exists(os.path.join(out_p, "runs", n, "checkpoint", "run.json")) for n in sums),
              "%s: each with its checkpoint" % point)
        rc, so, se = run(study_args(out_p, jobs) + ["--resume"], tmp)
        check(rc == 0, "%s: the interrupted study resumes: %s" % (point, se))
        check(verdicts(out_p) == whole, "%s: ... to the table of the uninterrupted study: %s" % (point, verdicts(out_p)))
        sums = summaries(out_p)
        check(sorted((r["status"], r["steps"]) for r in sums.values()) == [("finished", 6000), ("finished", 7500)],
              "%s: ... its runs finished: %s" % (point, [(r["status"], r["steps"]) for r in sums.values()]))
        if point.startswith("step"):
            check([r["runs"] for r in sums.values()] == [2, 2], "%s: ... from their checkpoints" % point)
            check(all(r["overrides"].get("young_modulus") == 1e8 and r["overrides"].get("probe_interval") == 0.001
                      for r in sums.values()),
                  "... with their overrides (young_modulus, probe_interval) kept by the checkpoint")

    # whatever a run directory has or lacks, --resume completes the study: a summary.json cut short (as a
    # copy that stopped half-way leaves it), a damaged checkpoint (the run is done again afresh), a run
    # directory without summary.json, and one without its checkpoint
    for damage in ["cut_summary", "bad_checkpoint", "no_summary", "no_checkpoint"]:
        out_d = os.path.join(tmp, "damaged_" + damage)
        env = dict(os.environ, DVI_STUDY_INTERRUPT="step:2000")
        p = subprocess.run([DVI] + study_args(out_d, 2), cwd=tmp, capture_output=True, text=True, timeout=120, env=env)
        check(p.returncode == 130, "%s: interrupted (got %d)" % (damage, p.returncode))
        victim = os.path.join(out_d, "runs", "dem_E1e+08_dt4e-05")
        if damage == "cut_summary":
            text = open(os.path.join(victim, "summary.json")).read()
            open(os.path.join(victim, "summary.json"), "w").write(text[:len(text) // 2])
        elif damage == "bad_checkpoint":
            cp = os.path.join(victim, "checkpoint")
            for f in os.listdir(cp):
                if f.startswith("state-"):
                    open(os.path.join(cp, f), "wb").write(b"not a state")
        elif damage == "no_summary":
            os.remove(os.path.join(victim, "summary.json"))
        else:
            os.remove(os.path.join(victim, "checkpoint", "run.json"))
        rc, so, se = run(study_args(out_d, 2) + ["--resume"], tmp)
        check(rc == 0 and verdicts(out_d) == whole, "%s: --resume completes the study: %s %s" % (damage, verdicts(out_d), se))
        if damage == "bad_checkpoint":
            check("could not continue from its checkpoint" in se and "running it afresh" in se,
                  "a run whose checkpoint cannot be continued is run afresh: %s" % se)

    # a scene without a study object: the ladders are chosen from the scene, printed one line each and
    # recorded in study.json. The sliding box (examples/scenes/sliding_box.json: a 1 kg box, 0.2 m cube, on a
    # plane; default material E = 1e7 Pa, nu = 0.3, restitution 0, taken as 0.01; DVI step 1 ms):
    #   DVI: 1 ms x 2^k, k = 0..5 (at most 6 steps; 32 ms is below a quarter of the 0.5 s run), each run only
    #        while the one below is acceptable;
    #   DEM: the stiffest contact's critical step of docs/dem.md: a corner on the plane, m = 1 kg, R = d = 0.1 m
    #        (the box's smallest half extent), E* = E / (2 (1 - nu^2)), K = 4/3 E* sqrt(R); the Hertz tangent
    #        stiffness 1.5 K sqrt(delta) at the overlap of an impact at the characteristic speed 1 m/s,
    #        delta = (5 m v^2 / (4 K))^(2/5); alpha = 10.749 / sqrt(1.5) (Hertz, e = 0.01, at that overlap);
    #        the four corners' spring rate bound s k/m, s = 4 + 6 * 2^(1/4) (lift and the two rocking modes),
    #        the dashpot's a = sqrt(s) alpha, limited to the step: h sqrt(s k/m) = x with
    #        a x^3 + x^2 - 2 a x - 4 = 0, h = 9.738e-4 s, to two digits 9.7e-4 s, then halved.
    sliding_box = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "scenes", "sliding_box.json")
    E_star = 1e7 / (2 * (1 - 0.3 ** 2))
    K = 4.0 / 3.0 * E_star * 0.1 ** 0.5
    delta = (5 * 1.0 * 1.0 ** 2 / (4 * K)) ** 0.4
    k_tan = 1.5 * K * delta ** 0.5
    alpha = 10.749 / 1.5 ** 0.5
    s_rate = 4 + 6 * 2 ** 0.25
    a_rate = s_rate ** 0.5 * alpha
    lo, hi = 0.0, 2.0
    for _ in range(60):
        x = 0.5 * (lo + hi)
        lo, hi = (x, hi) if a_rate * x ** 3 + x * x - 2 * a_rate * x - 4 < 0 else (lo, x)
    h_crit = lo / (s_rate * k_tan / 1.0) ** 0.5
    check(abs(h_crit - 9.738e-4) < 1e-6, "the expected critical step: %g" % h_crit)
    out_sb = os.path.join(tmp, "sliding_box_study")
    rc, so, se = run(["study", sliding_box, "--out", out_sb, "--duration", "0.5", "--jobs", "2"], tmp)
    check(rc == 0, "dvi study on a scene without a study object exits 0 (got %d): %s" % (rc, se))
    lines = {l.split(":")[0]: l for l in so.splitlines() if l.startswith("ladder ")}
    parse = lambda l: [float(x) for x in l.split(":", 1)[1].split(" s (")[0].split(",")]
    dvi_l = parse(lines.get("ladder dvi", "ladder dvi: 0 s ("))
    dem_l = parse(lines.get("ladder dem", "ladder dem: 0 s ("))
    check(dvi_l == [0.001 * 2 ** k for k in range(6)], "the DVI ladder is the scene's step x 2^k: %s" % dvi_l)
    check(abs(dem_l[0] - 9.7e-4) < 1e-12 and 0.98 * h_crit <= dem_l[0] <= h_crit,
          "the DEM ladder starts at the critical step %.4g s to two digits: %s" % (h_crit, dem_l))
    check(dem_l == [dem_l[0] / 2 ** k for k in range(4)], "... and halves it: %s" % dem_l)
    check("critical step 0.0009738 s" in lines.get("ladder dem", ""), "the line gives the critical step: %s" % lines)
    table_sb = json.load(open(os.path.join(out_sb, "study.json")))
    check({l["method"]: l["dts"] for l in table_sb.get("ladders", [])} == {"dvi": dvi_l, "dem": dem_l},
          "study.json records the ladders: %s" % table_sb.get("ladders"))
    # the DVI ladder climbs while its runs are acceptable: at 8 ms the CCP's first step opens the sliding
    # contact by h mu v = 6.4 mm, more than the 5 mm collision envelope (the health monitor's hover), so
    # 16 ms is not run; 4 ms is the largest acceptable step
    dvi_rows = [(r["dt"], r["acceptable"]) for r in table_sb["runs"] if r["method"] == "dvi"]
    check(dvi_rows == [(0.008, False), (0.004, True), (0.002, True), (0.001, True)],
          "the DVI ladder stops at its first unacceptable run: %s" % dvi_rows)
    check([r["reason"] for r in table_sb["runs"] if r["method"] == "dvi" and r["dt"] == 0.008] == ["health: hover"],
          "... for the CCP's hop: %s" % [r["reason"] for r in table_sb["runs"]])
    check("the dvi ladder stops at 0.008 s" in se and "0.016 s and above not run" in se, "... and says so: %s" % se)
    check(all(r["acceptable"] for r in table_sb["runs"] if r["method"] == "dem"), "the DEM runs hold")
    best_sb = {b["method"]: b["dt"] for b in table_sb["largest_acceptable"]}
    check(best_sb == {"dvi": 0.004, "dem": 9.7e-4}, "the largest acceptable steps: %s" % best_sb)
    # no contact to take a critical step from (a ball that starts in the air): the place is named, nothing run
    falling = {"name": "falling", "materials": {"default": {"friction": 0.4}},
               "bodies": [{"name": "ground", "type": "fixed", "shapes": [{"type": "plane"}]},
                          {"name": "ball", "mass": 1, "position": [0, 0, 1], "shapes": [{"type": "sphere", "radius": 0.1}]}],
               "formulation": {"dt": 0.001}, "duration": 0.5,
               "probes": [{"name": "ball", "what": "position", "body": "ball"}]}
    falling_scene = os.path.join(tmp, "falling.json")
    with open(falling_scene, "w") as f:
        json.dump(falling, f)
    rc, so, se = run(["study", falling_scene, "--out", os.path.join(tmp, "bad")], tmp)
    check(rc == 2 and "study.dts.dem: no ladder given, and none can be chosen: no contact in its first 64 steps" in se
          and not os.path.exists(os.path.join(tmp, "bad")), "no DEM ladder can be chosen: %d %s" % (rc, se))

    # bad settings: exit 2, the place named, nothing run
    def refused(args, expect, scene_file=scene):
        rc, so, se = run(["study", scene_file, "--out", os.path.join(tmp, "bad")] + args, tmp)
        check(rc == 2, "%s exits 2 (got %d)" % (args, rc))
        check(expect in se, "%s: the message names %r: %s" % (args, expect, se))
        check(not os.path.exists(os.path.join(tmp, "bad")), "%s runs nothing" % args)

    refused(["--observable", "load.slab.f_up"], '--observable: probe "load" has no column "slab.f_up"')
    refused(["--observable", "nothing.x"], '--observable: no probe named "nothing"')
    refused(["--dts-dvi", "0.002,-0.001"], "--dts-dvi[1]: must be > 0")
    refused(["--dts-dem", "0"], "--dts-dem[0]: must be > 0")
    refused(["--methods", "dvi,fem"], '--methods[1]: unknown method "fem"')
    refused(["--jobs", "0"], "jobs")
    # too few samples for the observable: a probe interval longer than the run (its only sample at t = 0,
    # every run "agreeing") or the window
    refused(["--probe-interval", "1", "--observable", "load.slab.f_dir", "--at", "0.3"],
            "--probe-interval: 1 s leaves 1 sample over the run; at least 5 are needed (at most 0.075 s)")
    refused(["--probe-interval", "0.05"],
            "--probe-interval: 0.05 s leaves 3 samples in the observable's window; at least 5 are needed")
    broken = json.loads(json.dumps(SCENE))
    broken["study"]["dts"]["dem"] = [4e-5, 0]
    broken["study"]["methods"] = ["dvi", "xdem"]
    broken["study"]["observable"]["column"] = "load"
    broken["study"]["ladder"] = 3
    bad_scene = os.path.join(tmp, "broken.json")
    with open(bad_scene, "w") as f:
        json.dump(broken, f)
    refused([], "study.dts.dem[1]: must be > 0", bad_scene)
    refused([], 'study.methods[1]: unknown method "xdem"', bad_scene)
    refused([], "study.observable.column: must be PROBE.COLUMN", bad_scene)
    refused([], "study.ladder: unknown key", bad_scene)
    few = json.loads(json.dumps(SCENE))
    few["study"]["probe_interval"] = 0.5
    few_scene = os.path.join(tmp, "few_samples.json")
    with open(few_scene, "w") as f:
        json.dump(few, f)
    refused([], "study.probe_interval: 0.5 s leaves 1 sample in the observable's window", few_scene)
    # runs whose steps did not converge (Jacobi, tolerance 1e-14, two iterations a step: 91 of the 150 steps at
    # 2 ms) are not acceptable, and do not
    # serve as the reference: the verdict counts them (they were "stable" and acceptable)
    strict = json.loads(json.dumps(SCENE))
    strict["formulation"].update({"solver": "jacobi", "tolerance": 1e-14, "max_iterations": 2})
    strict["study"]["methods"] = ["dvi"]
    strict_scene = os.path.join(tmp, "unconverged.json")
    with open(strict_scene, "w") as f:
        json.dump(strict, f)
    rc, so, se = run(["study", strict_scene, "--out", os.path.join(tmp, "unconverged"), "--jobs", "2"], tmp)
    check(rc == 0, "the unconverged study exits 0 (got %d): %s" % (rc, se))
    uc = json.load(open(os.path.join(tmp, "unconverged", "study.json")))
    for r in uc["runs"]:
        check(r["status"] == "stable" and r["acceptable"] is False and r["not_converged_steps"] > 0
              and r["reason"] == "solver: %d steps not converged" % r["not_converged_steps"] and not r["reference"],
              "an unconverged run is not acceptable: %s" % r)
    check([b["dt"] for b in uc["largest_acceptable"]] == [None], "no acceptable step: %s" % uc["largest_acceptable"])
    # dvi check checks the study object as dvi study does, and describes it
    rc, so, se = run(["check", scene], tmp)
    check(rc == 0 and "study       4 runs: dvi 2 steps (0.002 to 0.004 s), dem 2 steps (4e-05 to 0.005 s) x 1 modulus"
          in so, "dvi check describes the study: %s %s" % (so, se))
    rc, so, se = run(["check", bad_scene], tmp)
    check(rc == 2 and "study.dts.dem[1]: must be > 0" in se and "invalid (4 errors)" in se,
          "dvi check refuses a bad study object: %s" % se)
    rc, so, se = run(["study", "--help"], tmp)
    check(rc == 0 and "Usage: dvi study SCENE" in so, "dvi study --help")

print("%d failure%s" % (len(failures), "" if len(failures) == 1 else "s"))
sys.exit(1 if failures else 0)
