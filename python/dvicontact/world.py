"""Worlds built in Python, and step-size studies.

World, Body and Joint are the C extension's types (dvicontact._core, over
<dvi/world.h>); study() runs `dvi study` of the same build and returns its
table (docs/python.md, "Building a world" and "Studies").
"""

import csv
import json
import os
import signal
import subprocess

import numpy as np

from . import _paths
from ._core import Body, Error, FileError, InputError, Joint, World

__all__ = ["Body", "Joint", "World", "study"]

# study()'s options: keyword -> how `dvi study` takes it (docs/cli.md, "dvi study")
_LIST_OPTIONS = {"dts_dvi": "--dts-dvi", "dts_dem": "--dts-dem", "methods": "--methods",
                 "young_moduli": "--young-moduli"}
_VALUE_OPTIONS = {"duration": "--duration", "observable": "--observable", "at": "--at", "window": "--window",
                  "rtol": "--rtol", "atol": "--atol", "overlap": "--overlap", "probe_interval": "--probe-interval",
                  "solver": "--solver", "jobs": "--jobs", "threads": "--threads"}
_FLAG_OPTIONS = {"resume": "--resume", "quiet": "--quiet"}


def _text(value):
    """A number as `dvi` reads it back exactly (repr of a float), anything else as str."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _study_args(options):
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        if key in _LIST_OPTIONS:
            items = [value] if isinstance(value, (str, int, float)) else list(value)
            args += [_LIST_OPTIONS[key], ",".join(_text(v) for v in items)]
        elif key == "window":
            t0, t1 = value
            args += ["--window", "%s,%s" % (_text(float(t0)), _text(float(t1)))]
        elif key in _VALUE_OPTIONS:
            args += [_VALUE_OPTIONS[key], _text(value)]
        elif key in _FLAG_OPTIONS:
            args.append(_FLAG_OPTIONS[key])
        else:
            known = sorted(list(_LIST_OPTIONS) + list(_VALUE_OPTIONS) + list(_FLAG_OPTIONS) + ["out"])
            raise InputError('study: unknown option "%s" (known: %s)' % (key, ", ".join(known)))
    return args


def _default_out(scene):
    """`dvi study`'s default directory, out/NAME_study (NAME: the scene's name, else "scene")."""
    name = None
    try:
        with open(scene, encoding="utf-8") as f:
            name = json.load(f).get("name")
    except (OSError, ValueError, AttributeError):
        pass
    return os.path.join("out", "%s_study" % (name if isinstance(name, str) and name else "scene"))


def _column(name, cells):
    """One column of study.csv as a NumPy array: acceptable as bool, integers as int64,
    numbers as float64 (nan where dvi wrote nan), text as str."""
    if name == "acceptable":
        return np.array([c == "1" for c in cells], dtype=bool)
    try:
        return np.array([int(c) for c in cells], dtype=np.int64)
    except ValueError:
        pass
    try:
        return np.array([float(c) for c in cells], dtype=np.float64)
    except ValueError:
        return np.array(cells, dtype=str)


def read_study_table(path, use_pandas=True):
    """read_study_table(path, use_pandas=True) -> pandas.DataFrame or dict of ndarray

    The table of a study.csv written by `dvi study` (docs/study.md): one row per run,
    the CSV's columns under its names ("method", "dt [s]", "young_modulus [Pa]",
    "status", "reason", ..., "acceptable"). A pandas DataFrame when use_pandas and
    pandas can be imported, else a dict of NumPy arrays (column name -> array)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise Error("%s: empty (no header)" % path)
    header, body = rows[0], rows[1:]
    columns = {name: _column(name, [r[i] for r in body]) for i, name in enumerate(header)}
    if use_pandas:
        try:
            import pandas
        except ImportError:
            pandas = None
        if pandas is not None:
            return pandas.DataFrame(columns, columns=header)
    return columns


def study(scene, dts_dvi=None, dts_dem=None, out=None, **options):
    """study(scene, dts_dvi=None, dts_dem=None, out=None, **options) -> DataFrame or dict

    Runs `dvi study SCENE` (docs/study.md) with the `dvi` of this build or
    installation ($DVI_EXE when set) and returns its table, read from the
    study.csv it writes: a pandas DataFrame when pandas can be imported, else a
    dict of NumPy arrays (read_study_table). It writes the same files as
    `dvi study`: OUT/study.csv, study.json, study.svg and runs/ (out: default
    out/NAME_study, NAME the scene's name).

    dts_dvi, dts_dem: the ladders of steps (s), lists. The options are those of
    `dvi study` (docs/cli.md), as keywords: methods (['dvi', 'dem'] or one),
    young_moduli (Pa, list), duration (s), observable ('PROBE.COLUMN'), at (s)
    or window ((t0, t1) s), rtol or atol, overlap, probe_interval (s), solver,
    jobs, threads, resume (bool), quiet (bool). None leaves an option to the
    scene's study object.

    Errors: FileError for a scene file that does not exist; InputError with
    dvi's message (its stderr) for a bad scene or option (exit 2), nothing
    run; Error when the table could not be written
    (exit 1). Ctrl-C: the study stops its runs (they write checkpoints;
    resume=True continues), and KeyboardInterrupt is raised once it has ended.
    """
    scene = os.fspath(scene)
    if not os.path.isfile(scene):
        raise FileError("%s: cannot open (no such file)" % scene)
    options = dict(options, dts_dvi=dts_dvi, dts_dem=dts_dem)
    args = _study_args(options)
    out = os.fspath(out) if out is not None else _default_out(scene)
    cmd = [_paths.dvi_exe(), "study", scene, "--out", out] + args
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise Error("study: cannot run %s: %s" % (cmd[0], e)) from e
    try:
        stdout, stderr = proc.communicate()
    except KeyboardInterrupt:
        # a Ctrl-C on the terminal reached the study too; a SIGINT sent to this process alone
        # did not: pass it on (the study takes one and ignores the rest), and wait for its runs
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.communicate()
        raise
    if proc.returncode == 130:
        raise KeyboardInterrupt("dvi study: interrupted (resume=True continues it)")
    message = stderr.strip() or stdout.strip()
    if proc.returncode == 2:
        raise InputError(message)
    if proc.returncode != 0:
        raise Error("dvi study exited %d: %s" % (proc.returncode, message))
    return read_study_table(os.path.join(out, "study.csv"))
