"""Scenes and models from Python (dvicontact.Scene, dvicontact.Model).

The physics against the analytic answers the C suites check (the sliding
box's stop, the rover's static wheel loads), and the same bits as `dvi run`:
final states (the checkpoint blob) and probe rows (the CSV text).
"""

import gc
import json
import os
import re
import signal
import subprocess
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import dvicontact
from dvicontact import _core

SRC = Path(os.environ["DVI_SOURCE_DIR"])
SCENES = SRC / "examples" / "scenes"
DVI = os.environ["DVI_EXE"]
G = 9.81


def fnv64(data):
    """The 64-bit FNV-1a hash `dvi run` writes as run.json's state.hash (tool/dvi_util.c)."""
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def csv_text(columns, units, rows):
    """The text dvi_csv writes (<dvi/output.h>): "name [unit]" titles, values "%.10g"."""
    def num(x):
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        return "%.10g" % x

    head = ",".join(f"{c} [{u}]" if u else c for c, u in zip(columns, units))
    return head + "\n" + "".join(",".join(num(x) for x in r) + "\n" for r in rows)


def without_wall_columns(text):
    """The CSV without its wall-clock columns (timings differ between runs, tools/scene_hashes.sh)."""
    lines = [line.split(",") for line in text.splitlines()]
    keep = [i for i, title in enumerate(lines[0]) if not title.startswith("wall_")]
    return "\n".join(",".join(r[i] for i in keep) for r in lines) + "\n"


# ---- the same bits as `dvi run` --------------------------------------------------------

@pytest.mark.parametrize("name,duration", [("incline", 0.1), ("pendulum", 0.1), ("box_stack_10", 0.2)])
def test_same_bits_as_dvi_run(tmp_path, name, duration):
    scene = SCENES / f"{name}.json"
    out = tmp_path / "run"
    subprocess.run([DVI, "run", str(scene), "--duration", repr(duration), "--threads", "1", "--checkpoint-minutes",
                    "0", "--out", str(out), "--quiet"], check=True, capture_output=True)
    run = json.loads((out / "checkpoint" / "run.json").read_text())
    blob = (out / "checkpoint" / run["state"]["file"].split("/")[-1]).read_bytes()

    m = dvicontact.Model(dvicontact.Scene(scene, overrides={"duration": duration, "threads": 1}))
    m.run(record=True)
    assert m.step_count == run["step"]
    mine = m.save_state()
    assert fnv64(mine) == run["state"]["hash"]
    assert mine == blob  # every bit of the final state: poses, velocities, warm starts

    # the probe rows: the CSV text `dvi run` wrote (its wall-clock columns aside)
    records = m.records()
    for info in m.probe_info:
        columns, rows = records[info["name"]]
        assert len(rows) >= 2
        written = (out / f"{info['name']}.csv").read_text()
        assert without_wall_columns(csv_text(columns, info["units"], rows)) == without_wall_columns(written)

    # `dvi run`'s checkpoint continues here as the model that wrote it would
    resumed = dvicontact.Model.resume(dvicontact.Scene(scene, overrides={"threads": 1}),
                                      out / "checkpoint" / run["state"]["file"].split("/")[-1])
    assert resumed.step_count == m.step_count
    m.step(25)
    resumed.step(25)
    assert resumed.save_state() == m.save_state()


def test_checkpoint_resume_is_bit_identical(tmp_path):
    scene = dvicontact.Scene(SCENES / "box_stack_10.json", overrides={"threads": 1})
    a = dvicontact.Model(scene)
    a.step(40)
    a.save(tmp_path / "state.bin")
    a.step(40)
    b = dvicontact.Model.resume(scene, tmp_path / "state.bin")
    assert b.step_count == 40 and b.time == pytest.approx(40 * 0.005, abs=1e-15)
    b.step(40)
    assert b.save_state() == a.save_state()
    assert np.array_equal(b.positions, a.positions) and np.array_equal(b.orientations, a.orientations)
    assert np.array_equal(b.velocities, a.velocities) and np.array_equal(b.angular_velocities, a.angular_velocities)
    # a state of another scene is refused, the model unchanged
    other = dvicontact.Model(SCENES / "pendulum.json")
    with pytest.raises(dvicontact.InputError):
        other.load(tmp_path / "state.bin")
    assert other.step_count == 0
    with pytest.raises(dvicontact.FileError):
        b.load(tmp_path / "missing.bin")


# ---- physics --------------------------------------------------------------------------

def test_sliding_box_stops_at_v0_squared_over_2_mu_g():
    # sliding_box_coulomb.json: 1 kg, 0.2 m cube launched at 2 m/s, mu 0.4, h 1e-3 (tests/test_coulomb_world.c).
    # It decelerates at mu g (1.6076 m/s at 0.1 s), never leaves the ground, and stops at v0^2/(2 mu g)
    # = 0.50968 m less the discrete sum's half step h v0 / 2: 0.508684 m.
    v0, mu, h = 2.0, 0.4, 1e-3
    m = dvicontact.Model(SCENES / "sliding_box_coulomb.json")
    box = m.body_index("box")
    m.run(0.1, record=True)
    assert m.velocities[box, 0] == pytest.approx(v0 - 0.1 * mu * G, abs=1e-6)
    m.run(0.6, record=True)
    x = m.positions[box, 0]
    assert x == pytest.approx(0.508684, abs=1e-5)
    assert x == pytest.approx(v0**2 / (2 * mu * G), abs=h * v0 / 2 + 1e-5)
    assert abs(m.velocities[box, 0]) < 1e-9
    _, z = m.records()["box"]
    assert np.max(np.abs(z[:, 3] - 0.1)) < 1e-6  # no hop
    # at rest the four corners carry the weight: contact forces sum to m g up
    c = m.contacts
    assert np.sum(c["force"][c["body_b"] == box, 2]) - np.sum(c["force"][c["body_a"] == box, 2]) == \
        pytest.approx(G, rel=1e-9)
    # the CCP's box hops on the first step and lands where Coulomb's stops (within 1e-4 m)
    p = dvicontact.Model(SCENES / "sliding_box.json")
    p.run(0.6)
    assert p.positions[box, 0] == pytest.approx(x, abs=1e-4)


def reference_loads(variant):
    ref = json.loads((SRC / "data" / "rover" / "rocker_bogie_rover.json").read_text())["static_wheel_loads"][variant]
    return [ref[side][k] for side in ("left", "right") for k in ("N_front", "N_middle", "N_rear")]


@pytest.mark.parametrize("file,variant", [("rover_statics_scarecrow.json", "Scarecrow"),
                                          ("rover_statics_fullrover.json", "FullRover")])
def test_rover_static_wheel_loads(file, variant):
    # tests/test_scene.c (rover_case): after 0.2 s (100 steps of Lemke) each wheel's load, the probe
    # wheel_loads, within 0.5 % of the reference's static loads (data/rover/SOURCES.md, method 3)
    ref = reference_loads(variant)
    m = dvicontact.Model(dvicontact.Scene(SCENES / file, overrides={"duration": 0.2}))
    assert m.probes["wheel_loads"] == ["time"] + [f"wheel_{w}.f_up" for w in ("LF", "LM", "LB", "RF", "RM", "RB")]
    m.run()
    loads = m.sample("wheel_loads")[1:]
    for got, want in zip(loads, ref):
        assert got == pytest.approx(want, rel=0.005)
    # the same loads from the contacts: the vertical force each wheel takes from the ground
    c = m.contacts
    assert len(c["force"]) == 12
    for k, w in enumerate(("LF", "LM", "LB", "RF", "RM", "RB")):
        i = m.body_index(f"wheel_{w}")
        fz = np.sum(c["force"][c["body_b"] == i, 2]) - np.sum(c["force"][c["body_a"] == i, 2])
        assert fz == pytest.approx(loads[k], rel=1e-9)
    total = json.loads((SRC / "data" / "rover" / "rocker_bogie_rover.json").read_text())[
        "static_wheel_loads"][variant]["total_mass"]
    assert sum(loads) == pytest.approx(total * G, rel=1e-3)


# ---- bad input ---------------------------------------------------------------------------

def sliding_box():
    return json.loads((SCENES / "sliding_box.json").read_text())


def test_bad_input_raises_with_the_library_s_text():
    s = sliding_box()
    s["bodies"][1]["mass"] = -1.0
    with pytest.raises(dvicontact.InputError, match=re.escape("bodies[1].mass: must be > 0")) as e:
        dvicontact.Scene(s)
    assert e.value.status == "invalid_arg"
    s = sliding_box()
    s["bodies"][1]["mas"] = 1.0
    with pytest.raises(dvicontact.InputError, match=re.escape("bodies[1].mas")):
        dvicontact.Scene(s)
    s = sliding_box()
    s["bodies"][1]["velocity"][0] = float("nan")
    with pytest.raises(dvicontact.InputError, match="NaN") as e:
        dvicontact.Scene(s)
    assert e.value.status == "parse"
    with pytest.raises(dvicontact.FileError, match="missing.json") as e:
        dvicontact.Scene(SCENES / "missing.json")
    assert isinstance(e.value, OSError) and e.value.status == "io"
    with pytest.raises(TypeError, match="source"):
        dvicontact.Scene(42)
    # overrides: the library's checks, named as `dvi run`'s options
    with pytest.raises(dvicontact.InputError, match="--dt: must be > 0"):
        dvicontact.Scene(sliding_box(), overrides={"dt": -1e-3})
    with pytest.raises(dvicontact.InputError, match="--solver: unknown solver"):
        dvicontact.Scene(sliding_box(), overrides={"solver": "simplex"})
    with pytest.raises(dvicontact.InputError, match="unknown key \"step\""):
        dvicontact.Scene(sliding_box(), overrides={"step": 1e-3})
    with pytest.raises(dvicontact.InputError, match="--duration: must be a finite number"):
        dvicontact.Scene(sliding_box(), overrides={"duration": float("inf")})
    with pytest.raises(TypeError, match="dt"):
        dvicontact.Scene(sliding_box(), overrides={"dt": "1e-3"})
    m = dvicontact.Model(sliding_box())
    with pytest.raises(dvicontact.InputError, match="no probe named 'nope'"):
        m.sample("nope")
    with pytest.raises(dvicontact.InputError, match="n: must be >= 0"):
        m.step(-1)


def test_overrides_reach_the_settings():
    s = dvicontact.Scene(SCENES / "sliding_box.json", overrides={"dt": 5e-4, "solver": "pgs", "duration": 0.25})
    assert (s.settings["dt"], s.settings["solver"], s.settings["duration"]) == (5e-4, "pgs", 0.25)
    m = s.model()
    m.run()
    assert m.step_count == 500 and m.time == pytest.approx(0.25, abs=1e-15)
    assert s.warnings == []


# ---- resources and interruption ---------------------------------------------------------------

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_no_leak_over_10000_scene_and_model_cycles():
    # A model's world takes its memory from the package's counting allocator
    # (dvi_model_create_with): every block it took is given back; the
    # scene's and the model's own tables are libc's, so the process's
    # resident size and Python's traced memory are checked too, after
    # 10,000 create/step/destroy cycles.
    tiny = {"units": "SI", "gravity": [0, 0, -9.81],
            "bodies": [{"name": "ground", "type": "fixed", "shapes": [{"type": "plane"}]},
                       {"name": "ball", "mass": 1.0, "position": [0, 0, 0.1],
                        "shapes": [{"type": "sphere", "radius": 0.1}]}],
            "formulation": {"dt": 1e-3}, "duration": 1.0,
            "probes": [{"name": "z", "what": "position", "body": "ball", "every": 1}]}

    def cycle():
        m = dvicontact.Model(dvicontact.Scene(tiny))
        m.step(2, record=True)
        assert _core._live_blocks() > blocks + 10  # the world's arrays, counted
        return m.records()["z"][1].shape

    blocks = _core._live_blocks()
    for _ in range(500):
        cycle()
    blocks = _core._live_blocks()
    gc.collect()  # json's indenting encoder leaves reference cycles to the collector
    tracemalloc.start()
    rss0 = rss_bytes()
    traced0 = tracemalloc.get_traced_memory()[0]
    for _ in range(10000):
        assert cycle() == (3, 4)
    gc.collect()
    grown = rss_bytes() - rss0
    traced = tracemalloc.get_traced_memory()[0] - traced0
    tracemalloc.stop()
    assert grown < 1 << 20, f"resident size grew by {grown} bytes"
    assert traced < 16 << 10, f"Python's traced memory grew by {traced} bytes"
    assert _core._live_blocks() == blocks


def test_keyboard_interrupt_stops_after_the_current_step():
    m = dvicontact.Model(SCENES / "sliding_box.json")
    n = 10**9  # 10^6 s of simulated time: the signal comes first
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    try:
        with pytest.raises(KeyboardInterrupt):
            timer.start()
            m.step(n, record=True)
    finally:
        timer.cancel()
    steps = m.step_count
    assert steps < n and m.time == pytest.approx(steps * 1e-3, rel=1e-12, abs=1e-15)
    # the rows recorded before the interrupt are kept; the model steps on
    assert len(m.records()["box"][1]) == 1 + steps // 10
    m.step()
    assert m.step_count == steps + 1
    assert np.all(np.isfinite(m.positions))


def test_models_step_in_parallel_threads():
    # the GIL is released during each step: two models in two threads give the bits one thread gives
    from concurrent.futures import ThreadPoolExecutor

    def run(_):
        m = dvicontact.Model(dvicontact.Scene(SCENES / "incline.json", overrides={"threads": 1, "duration": 0.2}))
        m.run()
        return m.save_state()

    alone = run(0)
    with ThreadPoolExecutor(2) as pool:
        both = list(pool.map(run, range(2)))
    assert both[0] == alone and both[1] == alone


# ---- the docs' tour ------------------------------------------------------------------------

def test_the_tour_in_docs_runs(tmp_path, monkeypatch):
    text = (SRC / "docs" / "python.md").read_text()
    tour = text.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", tour, re.S)
    assert blocks, "docs/python.md: the tour has no python block"
    (tmp_path / "examples").symlink_to(SRC / "examples")  # the tour's paths, its checkpoint in tmp_path
    monkeypatch.chdir(tmp_path)
    env = {"__name__": "__tour__"}
    for code in blocks:
        exec(compile(code, "docs/python.md", "exec"), env)


def test_blow_up_raises_numeric_error_with_dvi_run_s_text(tmp_path):
    # two DEM spheres meeting head on at 10 times their scene's step: the
    # energy grows 917 energy scales in two steps. `dvi run` stops with exit
    # status 1 and the health monitor's text; the model raises NumericError
    # with the same text, at the same step, and its time stays there.
    scene = SCENES / "head_on_dem.json"
    cp = subprocess.run([DVI, "run", str(scene), "--dt", "0.01", "--out", str(tmp_path / "run")],
                        capture_output=True, text=True)
    assert cp.returncode == 1
    line = next(ln for ln in cp.stderr.splitlines() if "blow-up" in ln)
    m = dvicontact.Model(dvicontact.Scene(scene, overrides={"dt": 0.01}))
    with pytest.raises(dvicontact.NumericError) as e:
        m.run()
    assert e.value.status == "numeric"
    assert str(e.value) in line and str(e.value).startswith("step 2 (t = 0.02 s): blow-up: the energy is")
    assert m.step_count == 2 and abs(m.time - 0.02) < 1e-15
    assert "blowup" in m.health["raised"]
