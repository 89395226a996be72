"""dvicontact.study: `dvi study` of the same build, its table as a DataFrame or
as NumPy arrays equal to the study.csv it wrote, its errors, its interruption.

The study is examples/scenes/incline.json cut to 0.1 s: DVI at 1 and 2 ms,
DEM at 0.2 and 0.4 ms, the observable the sliding box's velocity down the
slope's y at the end (8 runs of 50 to 500 steps: a second in all)."""

import csv
import math
import os
import re
import signal
import sys
import threading
import time

import numpy as np
import pytest

import dvicontact
from dvicontact import _paths

SCENE = os.path.join(os.environ["DVI_SOURCE_DIR"], "examples", "scenes", "incline.json")
OPTIONS = dict(dts_dvi=[0.001, 0.002], dts_dem=[2e-4, 4e-4], duration=0.1, observable="velocity.box_slide.vy",
               jobs=2, quiet=True)


def csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same_cell(cell, value):
    """A CSV cell and the table's value for it."""
    if isinstance(value, (bool, np.bool_)):
        return cell == ("1" if value else "0")
    if isinstance(value, (int, np.integer)):
        return int(cell) == value
    if isinstance(value, (float, np.floating)):
        return (math.isnan(value) and cell == "nan") or float(cell) == value
    return cell == value


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "incline"
    return out, dvicontact.study(SCENE, out=out, **OPTIONS)


def test_the_table_is_the_csv_as_a_data_frame(first):
    pandas = pytest.importorskip("pandas")
    out, table = first
    assert isinstance(table, pandas.DataFrame)
    header, rows = csv_rows(out / "study.csv")
    assert list(table.columns) == header
    assert len(table) == len(rows) == 4
    for i, row in enumerate(rows):
        for name, cell in zip(header, row):
            assert same_cell(cell, table[name].iloc[i]), (i, name, cell, table[name].iloc[i])
    # the runs: each ladder from its largest step; the box slides at g (sin 30 - 0.3 cos 30),
    # its velocity's y after 0.1 s is -a t cos 30 = -0.2040 m/s: the runs within 0.17 % (DVI at
    # 2 ms, its first step's settling) and 0.22 % (DEM at 0.4 ms, its springs' soft start)
    assert list(zip(table["method"], table["dt [s]"])) == [("dvi", 0.002), ("dvi", 0.001), ("dem", 4e-4),
                                                           ("dem", 2e-4)]
    assert (table["status"] == "stable").all() and table["acceptable"].all()
    th = math.radians(30)
    vy = -9.81 * (math.sin(th) - 0.3 * math.cos(th)) * 0.1 * math.cos(th)
    dvi = table[table["method"] == "dvi"]["observable"].to_numpy()
    dem = table[table["method"] == "dem"]["observable"].to_numpy()
    assert dvi == pytest.approx([vy, vy], rel=2e-3)
    assert dem == pytest.approx([vy, vy], rel=3e-3)
    for name in ("study.json", "study.svg", "runs"):
        assert (out / name).exists()


def test_without_pandas_a_dict_of_arrays(first, monkeypatch):
    out, _ = first
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    table = dvicontact.study(SCENE, out=out, resume=True, **OPTIONS)  # the runs are done: only the table
    assert isinstance(table, dict)
    header, rows = csv_rows(out / "study.csv")
    assert list(table) == header
    assert table["dt [s]"].dtype == np.float64 and table["acceptable"].dtype == bool
    assert table["not_converged_steps"].dtype == np.int64
    for i, row in enumerate(rows):
        for name, cell in zip(header, row):
            assert same_cell(cell, table[name][i].item())


def test_errors_carry_dvi_s_message(tmp_path):
    with pytest.raises(dvicontact.InputError, match=r"--dts-dvi\[0\]: must be > 0 \(got -0.001\)"):
        dvicontact.study(SCENE, dts_dvi=[-0.001], out=tmp_path / "a")
    bad = os.path.join(os.environ["DVI_SOURCE_DIR"], "tests", "data", "scenes_bad", "many_errors.json")
    with pytest.raises(dvicontact.InputError, match=r"bodies\[1\]\.mass: must be > 0 \(got 0\)"):
        dvicontact.study(bad, out=tmp_path / "b")
    with pytest.raises(dvicontact.InputError, match=r'--observable: probe "velocity" has no column "box_slide.vq"'):
        dvicontact.study(SCENE, out=tmp_path / "c", observable="velocity.box_slide.vq", duration=0.1)
    with pytest.raises(dvicontact.InputError, match=r'study: unknown option "dts" \(known: .*dts_dem, dts_dvi'):
        dvicontact.study(SCENE, out=tmp_path / "d", dts=[0.001])
    with pytest.raises(dvicontact.FileError, match="no_such_scene.json"):
        dvicontact.study(tmp_path / "no_such_scene.json", out=tmp_path / "e")
    assert not any((tmp_path / d).exists() for d in "abcde")  # nothing run


def test_ctrl_c_stops_the_study_and_resume_completes_it(tmp_path, monkeypatch):
    # the study raises SIGINT on itself before its first run (a Ctrl-C at that point): exit 130
    monkeypatch.setenv("DVI_STUDY_INTERRUPT", "start")
    with pytest.raises(KeyboardInterrupt):
        dvicontact.study(SCENE, out=tmp_path / "s", **OPTIONS)
    monkeypatch.delenv("DVI_STUDY_INTERRUPT")
    table = dvicontact.study(SCENE, out=tmp_path / "s", resume=True, **OPTIONS)
    assert len(table["method"]) == 4 and all(table["acceptable"])


def test_the_dvi_of_this_build(monkeypatch):
    exe = os.environ["DVI_EXE"]
    monkeypatch.delenv("DVI_EXE")
    assert os.path.realpath(_paths.dvi_exe()) == os.path.realpath(exe)


def test_the_guide_s_example_runs(tmp_path, monkeypatch):
    with open(os.path.join(os.environ["DVI_SOURCE_DIR"], "docs", "python.md"), encoding="utf-8") as f:
        section = f.read().split("\n## Studies\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    # run where examples/ is the source tree's, the outputs in a temporary directory
    os.symlink(os.path.join(os.environ["DVI_SOURCE_DIR"], "examples"), tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "docs/python.md", "exec"), {})
    header, rows = csv_rows(tmp_path / "out" / "incline_study" / "study.csv")
    assert len(rows) == 4 and all(r[header.index("acceptable")] == "1" for r in rows)


def test_ctrl_c_reaches_the_study_and_is_raised_once_it_has_ended(tmp_path, monkeypatch):
    # a Ctrl-C sent to this process alone (not to its process group) is passed on to the
    # study, which is waited for: here a stand-in for `dvi` that ends on SIGINT with 130
    fake = tmp_path / "dvi"
    fake.write_text("#!/bin/sh\n# dvi study SCENE ...\ntrap 'echo stopped > \"$2.stopped\"; exit 130' INT\n"
                    "echo > \"$2.ready\"\nwhile :; do sleep 0.05; done\n")
    fake.chmod(0o755)
    monkeypatch.setenv("DVI_EXE", str(fake))
    mark = tmp_path / "mark"  # the scene, as the stand-in sees it
    mark.write_text("{}")

    def interrupt_once_ready():
        while not os.path.exists(str(mark) + ".ready"):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt_once_ready, daemon=True)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        dvicontact.study(str(mark), out=tmp_path / "o")
    t.join(timeout=60)
    assert (tmp_path / "mark.stopped").read_text().strip() == "stopped"
