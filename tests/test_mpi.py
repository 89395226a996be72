#!/usr/bin/env python3
"""Scenes spread over MPI ranks give the single process's bits (docs/scale.md).

    python3 tests/test_mpi.py MPI_HASH MPIRUN SOURCE_DIR DVI [CASE ...]

MPI_HASH is tests/mpi_hash.c built; MPIRUN Open MPI's mpirun; DVI the dvi
command (under mpirun it refuses to run N copies of one run). Each case runs
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
job must stop with a non-zero status and a message, not hang).
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


def case(name, scene, steps, ranks=(2, 4), skins=("0", None), threads=None, grid=None):
    """skins: "0" the default; None a skin of 1e-4 m (the ghosts chosen again every few steps)."""
    if ONLY and name not in ONLY:
        return
    path = scene if os.path.sep in scene else os.path.join(SCENES, scene)
    extra = ["--threads", str(threads)] if threads else []
    ref, t = run([EXE, path, str(steps), "--single"] + extra)
    if grid:
        extra += ["--grid", grid]
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
            check(label, p.returncode == 0 and h == h0,
                  f"hash {h} against {h0}, status {p.returncode}\n{p.stdout}{p.stderr[-3000:]}")
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

# the dvi command under mpirun: one clear refusal, not N copies of one run writing the same files
if not ONLY or "refused: dvi run under mpirun" in ONLY:
    p, _ = run([MPIRUN, "--oversubscribe", "-n", "2", DVI, "run",
                os.path.join(SRC, "examples", "scenes", "sliding_box_dem.json"), "--quiet", "--out",
                tempfile.mkdtemp()], timeout=120)
    check("refused: dvi run under mpirun", p.returncode != 0 and "started as one of 2 MPI ranks" in p.stderr,
          p.stdout + p.stderr[-2000:])

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
