#!/usr/bin/env python3
"""Scenes spread over MPI ranks give the single process's bits (docs/scale.md).

    python3 tests/test_mpi.py MPI_HASH MPIRUN SOURCE_DIR DVI [CASE ...]

MPI_HASH is tests/mpi_hash.c built; MPIRUN Open MPI's mpirun; DVI the dvi
command. Each case runs
a scene for a number of steps on one process (dvi_model_step) and over 2 and
4 ranks (dvi_dist_step, `mpirun --oversubscribe`), with the default ghost
skin and with a skin so thin that the ghosts are chosen again every few
steps (bodies change ranks, their contact history moves with them), and
requires the same final-state hash (dvi_world_state_hash: the time and
every body's x, q, v, omega, bit for bit). A checkpoint written on 2 ranks
resumes on 4 (and one of 4 on 1) with the same bits; a checkpoint of
another scene, a damaged and a missing rank file are refused. The DVI
cases (APGD and Jacobi) share the bed's CCP over the ranks and compare with
the single process's run of the same scene (formulation.exact_sums: true).
Then the refusals: a scene that cannot be split, the DVI method with joints
or with a solver that cannot be shared (PGS), a rank that dies mid-run (the
job must stop with a non-zero status and a message, not hang). Last, the
dvi command under mpirun: the same scene file gives the same final state,
the same probe CSVs and VTK pieces that hold the one-process frames, and
its checkpoint resumes on another number of ranks with the same outputs.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

EXE, MPIRUN, SRC, DVI = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
ONLY = set(sys.argv[5:])
ENV = dict(os.environ)
# Open MPI as root (CI's container), on a machine with fewer cores than
# ranks, without the single-copy mechanism a container may forbid
ENV.update({
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_hwloc_base_binding_policy": "none",
    "OMP_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "passive",
})
SCENES = os.path.join(SRC, "tests", "data", "mpi")
failures = []
passed = 0


def run(args, timeout=600):
    t0 = time.time()
    p = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=timeout)
    return p, time.time() - t0


def mpirun(n, *args, timeout=600):
    return run([MPIRUN, "--oversubscribe", "-n", str(n), EXE, *args], timeout=timeout)


def hash_of(p):
    m = re.search(r"^hash ([0-9a-f]{16}) steps (\d+) time (\S+)$", p.stdout, re.M)
    return m.group(1) if m else None


def check(name, ok, detail=""):
    global passed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failures.append(name)
        print(f"FAIL {name}\n{detail}")
    sys.stdout.flush()


def case(name, scene, steps, ranks=(2, 4), skins=("0", None), threads=None, grid=None, rebalance=None):
    """skins: "0" the default; None a skin of 1e-4 m (the ghosts chosen again every few steps).
    rebalance: dvi_dist_settings.rebalance; the ranks must then rebalance at least once."""
    if ONLY and name not in ONLY:
        return
    path = scene if os.path.sep in scene else os.path.join(SCENES, scene)
    extra = ["--threads", str(threads)] if threads else []
    ref, t = run([EXE, path, str(steps), "--single"] + extra)
    if grid:
        extra += ["--grid", grid]
    if rebalance:
        extra += ["--rebalance", str(rebalance)]
    h0 = hash_of(ref)
    check(f"{name}: one process", ref.returncode == 0 and h0 is not None, ref.stdout + ref.stderr)
    if h0 is None:
        return
    print(f"     {name}: one process {t:.1f} s, hash {h0}")
    for n in ranks:
        for skin in skins:
            s = skin if skin is not None else "1e-4"
            p, t = mpirun(n, path, str(steps), "--skin", s, *extra)
            h = hash_of(p)
            rebuilds = [int(x) for x in re.findall(r"rebuilds (\d+)", p.stdout)]
            label = f"{name}: {n} ranks{' ' + grid if grid else ''}, skin {'default' if s == '0' else s}"
            rebalances = [int(x) for x in re.findall(r"rebalances (\d+)", p.stdout)]
            check(label, p.returncode == 0 and h == h0 and (not rebalance or min(rebalances or [0]) > 0),
                  f"hash {h} against {h0}, rebalances {rebalances}, status {p.returncode}\n"
                  f"{p.stdout}{p.stderr[-3000:]}")
            print(f"     {label}: {t:.1f} s, rebuilds per rank {rebuilds}, " +
                  " | ".join(l for l in p.stdout.splitlines() if l.startswith("rank")))


def refusal(name, args, n, pattern, timeout=120):
    if ONLY and name not in ONLY:
        return
    try:
        p, t = mpirun(n, *args, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(name, False, f"no answer within {timeout} s (a hang)")
        return
    text = p.stdout + p.stderr
    check(name, p.returncode != 0 and re.search(pattern, text) is not None,
          f"status {p.returncode}, expected a message matching {pattern!r}:\n{text[-3000:]}")
    print(f"     {name}: status {p.returncode} after {t:.1f} s: " +
          next((l for l in text.splitlines() if re.search(pattern, l)), "").strip()[:200])


# A DEM bed settling in a box: every contact's history, slabs along x.
case("dem_bed", "dem_bed_600.json", 400)
# The same bed under a tilted gravity: it flows against one wall, bodies
# cross the slabs' cuts (migration) and carry their contact history.
case("dem_bed_tilted", "dem_bed_600_tilted.json", 1600)
# The rover (19 joints, rank 0's) on a granular strip in DEM: wheels on grains of every rank.
case("rover_strip", os.path.join(SRC, "examples", "scenes", "rover_obstacle_granular_strip_hex_dem.json"), 1500,
     skins=("0",))
# The bed cut into 4 cells along y only, and into 1 x 2 (the default grid of
# 4 ranks on this square bed is 2 x 2, of a strip 4 x 1: slabs).
case("dem_bed_tilted_1x4", "dem_bed_600_tilted.json", 800, ranks=(4,), skins=(None,), grid="1x4")
case("dem_bed_1x2", "dem_bed_600.json", 400, ranks=(2,), skins=("0",), grid="1x2")
# Threads and ranks together: 2 threads on each of 2 ranks.
case("dem_bed_threads", "dem_bed_600_tilted.json", 150, ranks=(2,), skins=(None,), threads=2)
# The DVI method: the bed's CCP shared by the ranks (dvi_ccp_shared: products
# with halo exchanges, exact sums). The single process runs the same scene
# (formulation.exact_sums: true).
case("dvi_bed", "dvi_bed_600.json", 100)
# Sliding: bodies change ranks with their warm starts.
case("dvi_bed_tilted", "dvi_bed_600_tilted.json", 150, skins=(None,))
# Jacobi, and APGD on 2 threads per rank.
case("dvi_bed_jacobi", "dvi_bed_600_jacobi.json", 40, skins=(None,))
case("dvi_bed_threads", "dvi_bed_600_tilted.json", 60, ranks=(2,), skins=(None,), threads=2)
# Rebalancing: the cuts drawn again whenever a rank holds 1 % more than the
# mean (the default, 20 %, is not reached by these short runs): bodies change
# owners at many rebuilds, the bits do not change.
case("dem_bed_rebalanced", "dem_bed_600_tilted.json", 800, ranks=(4,), skins=(None,), rebalance=1.01)
case("dvi_bed_rebalanced", "dvi_bed_600_tilted.json", 60, ranks=(3,), skins=(None,), rebalance=1.01)

def resume(name, scene, first, then, ranks_a, ranks_b):
    """first steps on ranks_a, a checkpoint, then more steps on ranks_b: the
    single process's hash after first + then steps."""
    if ONLY and name not in ONLY:
        return
    path = os.path.join(SCENES, scene)
    ref, _ = run([EXE, path, str(first + then), "--single"])
    h0 = hash_of(ref)
    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "ck")
        a, _ = mpirun(ranks_a, path, str(first), "--save", ck, "--skin", "1e-4")
        b, t = mpirun(ranks_b, path, str(then), "--load", ck)
        h = hash_of(b)
        check(name, a.returncode == 0 and b.returncode == 0 and h == h0 and h0 is not None,
              f"hash {h} against {h0}\n{a.stdout}{a.stderr[-2000:]}{b.stdout}{b.stderr[-2000:]}")
        print(f"     {name}: {first} steps on {ranks_a} ranks, {then} more on {ranks_b}: {t:.1f} s, hash {h}")
        files = sorted(os.listdir(ck))
        # the refusals of a checkpoint that does not fit
        other = os.path.join(SCENES, "dem_bed_600_tilted.json" if "tilted" not in scene else "dem_bed_600.json")
        p, _ = mpirun(2, other, "10", "--load", ck)
        check(f"{name}: refused: another scene's checkpoint",
              p.returncode != 0 and "written for another scene" in p.stderr, p.stdout + p.stderr[-2000:])
        with open(os.path.join(ck, "rank-1.bin"), "r+b") as f:
            f.seek(200)
            byte = f.read(1)
            f.seek(200)
            f.write(bytes([byte[0] ^ 0xFF]))
        p, _ = mpirun(3, path, "10", "--load", ck)
        check(f"{name}: refused: a damaged rank file",
              p.returncode != 0 and "rank-1.bin: checksum mismatch" in p.stderr, p.stdout + p.stderr[-2000:])
        os.remove(os.path.join(ck, "rank-1.bin"))
        p, _ = mpirun(2, path, "10", "--load", ck)
        check(f"{name}: refused: a missing rank file",
              p.returncode != 0 and "rank-1.bin: cannot open" in p.stderr, p.stdout + p.stderr[-2000:])
        said = [l for l in p.stderr.splitlines() if l.startswith("error:")]
        print(f"     {name}: files {files}; " + (said[0][:160] if said else ""))


# A checkpoint of 2 ranks resumed on 4, and of 4 resumed on 1 (and the refusals).
resume("resume 2 to 4 ranks", "dem_bed_600_tilted.json", 800, 800, 2, 4)
resume("resume 4 to 1 rank", "dem_bed_600.json", 500, 300, 4, 1)
resume("dvi resume 2 to 4 ranks", "dvi_bed_600_tilted.json", 60, 60, 2, 4)

refusal("refused: a grid that is not the ranks", [os.path.join(SCENES, "dem_bed_600.json"), "10", "--grid", "3x1"], 2,
        r"error: settings\.grid: 3 x 1 subdomains for 2 ranks")
refusal("refused: one body", [os.path.join(SRC, "examples", "scenes", "sliding_box_dem.json"), "10"], 2,
        r"error: the scene cannot be split over 2 ranks")
refusal("refused: DVI with joints over ranks",
        [os.path.join(SRC, "examples", "scenes", "rover_obstacle_granular_strip_hex.json"), "10"], 2,
        r"error: formulation: the DVI method over ranks takes no joints yet")
PGS_SCENE = os.path.join(tempfile.mkdtemp(), "dvi_bed_600_pgs.json")
with open(os.path.join(SCENES, "dvi_bed_600.json")) as f, open(PGS_SCENE, "w") as g:
    g.write(f.read().replace('"solver": "apgd"', '"solver": "pgs"'))
refusal("refused: PGS over ranks", [PGS_SCENE, "10"], 2,
        r"error: formulation: the DVI method over ranks needs a solver that takes a shared problem \(apgd, jacobi\), not \"pgs\"")
refusal("refused: a rank dies", [os.path.join(SCENES, "dem_bed_600.json"), "200", "--die", "1:50"], 3,
        r"(exited on signal|exited with|non-zero status|aborted|killed)", timeout=120)

# ---- the dvi command under mpirun: `mpirun -n N dvi run SCENE` -------------------------------------
#
# The same scene file, unchanged, run by `dvi run` on one process and under
# mpirun: the final state's hash (summary.json) is the same, and so is every
# probe's CSV, cell for cell, except the solver's wall times. Columns that
# are sums over ranks (a fixed body's contact force, the kinetic energy of
# all bodies, the CCP's hover work) may differ in their last bits; they are
# compared to 1e-9.

# Probes of every kind the ranks sample, on generated bodies of every rank
# and on fixed ones (the ground and a wall: each rank's share summed).
PROBES = [
    {"name": "grains_pos", "what": "position", "bodies": ["bed[5]", "bed[300]", "bed[599]"], "every": 10},
    {"name": "grains_vel", "what": "velocity", "bodies": ["bed[5]", "bed[300]"], "every": 10},
    {"name": "grain_q", "what": "orientation", "body": "bed[300]", "every": 20},
    {"name": "grain_w", "what": "angular_velocity", "body": "bed[300]", "every": 20},
    {"name": "ground_load", "what": "contact_force", "component": [0, 0, -1], "body": "ground", "every": 10},
    {"name": "ground_load_mean", "what": "contact_force", "component": "up", "body": "ground", "average": True,
     "every": 10},
    {"name": "wall_force", "what": "contact_force", "body": "wall_y0", "every": 10},
    {"name": "grain_force", "what": "contact_force", "bodies": ["bed[300]", "bed[5]"], "every": 10},
    {"name": "grain_normal", "what": "contact_force", "component": "normal", "bodies": ["bed[300]", "bed[10]"],
     "average": True, "every": 10},
    {"name": "grain_with_bed", "what": "contact_force", "body": "bed[300]", "with": "bed", "every": 10},
    {"name": "grain_on_ground", "what": "contact_force", "component": "magnitude", "body": "bed[3]",
     "with": "ground", "every": 10},
    {"name": "ke", "what": "kinetic_energy", "every": 10},
    {"name": "energy", "what": "energy", "bodies": ["bed[5]", "ground"], "every": 10},
    {"name": "solver", "what": "solver", "every": 10},
]
SUMMED = {"ground_load", "ground_load_mean", "wall_force", "ke"}


def with_probes(scene, extra=None):
    import json
    with open(os.path.join(SCENES, scene)) as f:
        s = json.load(f)
    s["probes"] = PROBES + (extra or [])
    path = os.path.join(tempfile.mkdtemp(), scene.replace(".json", "_probes.json"))
    with open(path, "w") as f:
        json.dump(s, f)
    return path


def read_csv(path):
    import csv
    with open(path) as f:
        return list(csv.reader(f))


def compare_outputs(one, many):
    """Differences between two runs' outputs (an empty list: none)."""
    import json
    out = []
    a, b = (json.load(open(os.path.join(d, "summary.json"))) for d in (one, many))
    if a.get("state_hash") is None or a.get("state_hash") != b.get("state_hash"):
        out.append(f"final state hash {a.get('state_hash')} on one process, {b.get('state_hash')} over ranks")
    csvs = sorted(f for f in os.listdir(one) if f.endswith(".csv"))
    if not csvs:
        out.append("no CSV written")
    for name in csvs:
        if not os.path.exists(os.path.join(many, name)):
            out.append(f"{name}: not written over ranks")
            continue
        A, B = read_csv(os.path.join(one, name)), read_csv(os.path.join(many, name))
        if A[0] != B[0] or len(A) != len(B):
            out.append(f"{name}: header or row count differs ({len(A)} and {len(B)} rows)")
            continue
        for i, (ra, rb) in enumerate(zip(A[1:], B[1:])):
            for col, x, y in zip(A[0], ra, rb):
                if x == y or col.startswith("wall_"):
                    continue
                fx, fy = float(x), float(y)
                summed = name[:-4] in SUMMED or col.startswith("ccp_hover_work")
                if summed and abs(fx - fy) <= 1e-9 * max(abs(fx), abs(fy), 1e-12):
                    continue
                out.append(f"{name} row {i + 1}, {col}: {x} on one process, {y} over ranks")
    return out


def tool_case(name, scene, duration, ranks, vtk=False):
    if ONLY and name not in ONLY:
        return
    base = tempfile.mkdtemp()
    args = ["run", scene, "--quiet", "--duration", str(duration)] + (["--vtk-every", "10", "--vtk-ascii"] if vtk else [])
    one = os.path.join(base, "one")
    p, t1 = run([DVI] + args + ["--out", one])
    if p.returncode != 0:
        check(name, False, f"dvi run on one process: status {p.returncode}\n{p.stderr[-3000:]}")
        return
    for n in ranks:
        many = os.path.join(base, f"r{n}")
        p, t = run([MPIRUN, "--oversubscribe", "-n", str(n), DVI] + args + ["--out", many])
        diffs = [f"status {p.returncode}: {p.stderr[-2000:]}"] if p.returncode != 0 else compare_outputs(one, many)
        if not diffs and vtk:
            diffs = compare_frames(one, many, n)
        check(f"{name} ({n} ranks)", not diffs, "\n".join(diffs[:20]))
        print(f"     {name}: one process {t1:.1f} s, {n} ranks {t:.1f} s, {len(os.listdir(many))} outputs")


def vtp_points(path):
    """{array name: [rows]} and the point count of an ASCII VTK piece."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    piece = root.find("PolyData/Piece")
    arrays = {}
    for da in piece.iter("DataArray"):
        vals = (da.text or "").split()
        k = int(da.get("NumberOfComponents", "1"))
        arrays[da.get("Name")] = [tuple(vals[i:i + k]) for i in range(0, len(vals), k)]
    return int(piece.get("NumberOfPoints")), arrays


def compare_frames(one, many, n):
    """Each frame's pieces over ranks hold the one-process frame's bodies
    (every body once, the same numbers by id) and contacts (the same count)."""
    import xml.etree.ElementTree as ET
    out = []
    frames = os.path.join(many, "vtk", "frames")
    pvd = ET.parse(os.path.join(many, "vtk", "bodies.pvd")).getroot()
    files = [d.get("file") for d in pvd.iter("DataSet")]
    if not files or not all(f.endswith(".pvtp") for f in files):
        return [f"bodies.pvd lists {files[:3]}...: expected .pvtp files"]
    for i, f in enumerate(files):
        for kind in ("bodies", "contacts"):
            pv = ET.parse(os.path.join(many, "vtk", f.replace("bodies", kind))).getroot()
            sources = [p.get("Source") for p in pv.iter("Piece")]
            if len(sources) != n:
                out.append(f"{kind} frame {i}: {len(sources)} pieces for {n} ranks")
                continue
            _, ref = vtp_points(os.path.join(one, "vtk", "frames", f"{kind}_{i:06d}.vtp"))
            rows = {}
            count = 0
            for src in sources:
                npts, arr = vtp_points(os.path.join(frames, src))
                count += npts
                if kind == "bodies":
                    for j, bid in enumerate(arr["id"]):
                        rows[bid] = (arr["Points"][j], arr["velocity"][j])
            nref = len(ref["Points"])
            if count != nref:
                out.append(f"{kind} frame {i}: {count} points over the pieces, {nref} on one process")
            if kind == "bodies":
                for j, bid in enumerate(ref["id"]):
                    if rows.get(bid) != (ref["Points"][j], ref["velocity"][j]):
                        out.append(f"bodies frame {i}: body {bid[0]} differs or is missing")
                        break
    return out


tool_case("dvi run: DEM bed", with_probes("dem_bed_600.json"), 0.05, (2, 4))
tool_case("dvi run: DVI bed", with_probes("dvi_bed_600.json"), 0.1, (2, 4), vtk=True)
# the rover's own scene file, unchanged: its 22 probes (wheels, joints, the
# attitude and wheel-slip probes of studies/rover) over the ranks
tool_case("dvi run: rover on grains (DEM)",
          os.path.join(SRC, "examples", "scenes", "rover_obstacle_granular_strip_hex_dem.json"), 0.15, (2,))

# what the command refuses over ranks: a scene that cannot be split, the options it cannot honour yet
if not ONLY or "refused: dvi run of one body over ranks" in ONLY:
    p, _ = run([MPIRUN, "--oversubscribe", "-n", "2", DVI, "run",
                os.path.join(SRC, "examples", "scenes", "sliding_box_dem.json"), "--quiet", "--out",
                tempfile.mkdtemp()], timeout=120)
    check("refused: dvi run of one body over ranks",
          p.returncode == 2 and "cannot spread the scene over 2 MPI ranks" in p.stderr
          and p.stderr.count("cannot spread") == 1, p.stdout + p.stderr[-2000:])
if not ONLY or "refused: dvi run --strict over ranks" in ONLY:
    p, _ = run([MPIRUN, "--oversubscribe", "-n", "2", DVI, "run", os.path.join(SCENES, "dem_bed_600.json"),
                "--strict", "--out", tempfile.mkdtemp()], timeout=120)
    check("refused: dvi run --strict over ranks",
          p.returncode == 2 and "--strict is not available in a run over MPI ranks" in p.stderr,
          p.stdout + p.stderr[-2000:])


def tool_resume(name, scene, first, total, ranks_a, ranks_b):
    """A run over ranks_a ranks stopped at `first` s (its final checkpoint,
    mid-way through the averaging windows), resumed over ranks_b ranks (0:
    `dvi run --resume` without mpirun) to `total` s: the same outputs as one
    process run to `total` s at once."""
    if ONLY and name not in ONLY:
        return
    base = tempfile.mkdtemp()
    one, many = os.path.join(base, "one"), os.path.join(base, "many")
    p, _ = run([DVI, "run", scene, "--quiet", "--duration", str(total), "--out", one])
    if p.returncode != 0:
        check(name, False, f"dvi run on one process: {p.stderr[-2000:]}")
        return
    p, _ = run([MPIRUN, "--oversubscribe", "-n", str(ranks_a), DVI, "run", scene, "--quiet", "--duration",
                str(first), "--checkpoint-every", "300", "--out", many])
    if p.returncode != 0 or not any(f.startswith("ranks-") for f in os.listdir(os.path.join(many, "checkpoint"))):
        check(name, False, f"the first part over {ranks_a} ranks: status {p.returncode}: {p.stderr[-2000:]}")
        return
    cmd = [DVI, "run", "--resume", many, "--quiet", "--duration", str(total)]
    p, _ = run(cmd if ranks_b == 0 else [MPIRUN, "--oversubscribe", "-n", str(ranks_b)] + cmd)
    diffs = [f"resume: status {p.returncode}: {p.stderr[-2000:]}"] if p.returncode != 0 else compare_outputs(one, many)
    check(name, not diffs, "\n".join(diffs[:20]))


# 802 steps: two steps into the probes' windows of 10 steps
tool_resume("dvi run: resume 2 ranks on 4", with_probes("dem_bed_600.json"), 0.0250625, 0.05, 2, 4)
tool_resume("dvi run: resume 4 ranks on one process", with_probes("dvi_bed_600.json"), 0.05, 0.1, 4, 0)
if not ONLY or "refused: resuming one process's run over ranks" in ONLY:
    out = tempfile.mkdtemp()
    p, _ = run([DVI, "run", os.path.join(SCENES, "dem_bed_600.json"), "--quiet", "--duration", "0.001", "--out", out])
    p, _ = run([MPIRUN, "--oversubscribe", "-n", "2", DVI, "run", "--resume", out, "--duration", "0.002"],
               timeout=120)
    check("refused: resuming one process's run over ranks",
          p.returncode == 2 and "was written by one process" in p.stderr, p.stdout + p.stderr[-2000:])

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
