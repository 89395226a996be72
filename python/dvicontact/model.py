"""Scenes and models from Python (docs/python.md, "A five-minute tour").

A Scene is a scene file (docs/scene-format.md) read and validated, or the
same schema given as a dict; a Model is the world built from it, stepped by
the scene's dt, with its states, contacts, statistics, health, probes and
checkpoints as NumPy arrays and bytes. The same scene and overrides give the
same bits as `dvi run`.

Objects are not thread-safe: use one object from one thread at a time.
Different models step in parallel threads (the GIL is released during each
step).
"""

import json
import math
import os

from . import _core

__all__ = ["Model", "Scene"]

# The keys of Scene(..., overrides=): `dvi run`'s options of the same names.
OVERRIDE_KEYS = ("dt", "duration", "solver", "method", "threads", "young_modulus", "probe_interval", "friction",
                 "joint_solve", "lemke_coulomb")


def _error(cls, status, text):
    """An exception of the package's classes raised here, with its .status as the library's carry."""
    e = cls(text)
    e.status = status
    return e


def _steps_for(duration, dt):
    """The steps `dvi run` takes for a duration: duration/dt rounded when within 1e-9 of a whole number, else up."""
    n = duration / dt
    if not n < 9e15:
        raise _error(_core.InputError, "invalid_arg", f"duration: {duration!r} s is too many steps of {dt!r} s")
    k = round(n)
    if abs(n - k) <= 1e-9 * max(1.0, n):
        return int(k)
    return int(math.ceil(n))


class Scene:
    """Scene(source, overrides=None)

    A scene read and validated by the library (dvi_scene_load, dvi_scene_parse).

    source: a path (str or os.PathLike) of a scene file, or a dict of the
    same schema (serialised with json.dumps; relative file names resolve
    against the current directory). overrides: a dict of `dvi run`'s
    options, the same names with '_' for '-': dt (s), duration (s), solver,
    method, threads, young_modulus (Pa), probe_interval (s), friction,
    joint_solve, lemke_coulomb.

    Raises FileError when the file cannot be read, InputError with the
    library's text naming every problem's place ("bodies[1].mass: must be
    > 0"; "--dt: must be > 0"), TypeError for a source of another type.
    """

    def __init__(self, source, overrides=None):
        if isinstance(source, dict):
            # one key per line: a parse error's "scene:LINE:COLUMN" points at the key
            self._scene = _core._scene_parse(json.dumps(source, indent=1))
            self.path = None
        elif isinstance(source, (str, os.PathLike)):
            self._scene = _core._scene_load(source)
            self.path = os.fspath(source)
        else:
            raise TypeError(f"source: must be a path (str or os.PathLike) or a dict (got {type(source).__name__})")
        self.overrides = {}
        if overrides:
            if not isinstance(overrides, dict):
                raise TypeError(f"overrides: must be a dict (got {type(overrides).__name__})")
            self.overrides = {k.replace("-", "_") if isinstance(k, str) else k: v for k, v in overrides.items()}
            self._scene.apply_overrides(self.overrides)

    def __repr__(self):
        s = self.settings
        return f"Scene({s['name'] or self.path or 'dict'!r}, dt={s['dt']!r}, duration={s['duration']!r}, " \
               f"solver={s['solver']!r}, bodies={self.body_count})"

    @property
    def settings(self):
        """The run settings after overrides (dict): name, method, dt (s), duration (s), solver, threads,
        friction ('ccp' or 'coulomb'), coulomb_check, smallest_size (m), max_iterations, tolerance,
        block_tolerance, health."""
        return self._scene.settings()

    @property
    def warnings(self):
        """What the scene says that is accepted but should change (list of "path: message" lines)."""
        return [line for line in self._scene.warnings().splitlines() if line]

    @property
    def body_count(self):
        """Bodies a model of this scene creates (the explicit ones and every generator's)."""
        return self._scene.body_count()

    def model(self):
        """model() -> Model: builds a model of this scene."""
        return Model(self)


class Model:
    """Model(scene)

    The world built from a scene (dvi_model_create): scene is a Scene, or a
    source Scene() takes (path or dict). Steps of the scene's dt; the
    states are copies, in the bodies' creation order (body_names).

    Not thread-safe: one thread per object. Different models run in
    parallel threads.
    """

    def __init__(self, scene):
        if not isinstance(scene, Scene):
            scene = Scene(scene)
        self.scene = scene
        self._m = _core._Model(scene._scene)
        self._settings = scene.settings
        self._info = self._m.probe_info()
        self._names = None
        self._rows = [[] for _ in self._info]
        self._recorded_start = False

    def __repr__(self):
        return f"Model({self._settings['name'] or 'scene'!r}, step {self.step_count}, t = {self.time!r} s)"

    @classmethod
    def resume(cls, scene, path):
        """resume(scene, path) -> Model: a model of scene continued from a checkpoint file (load)."""
        m = cls(scene)
        m.load(path)
        return m

    # ---- stepping ---------------------------------------------------------------

    def step(self, n=1, record=False):
        """step(n=1, record=False) -> None

        Takes n steps of the scene's dt (the GIL released during each step).
        record: the due probes' rows are recorded after each step (and every
        probe's row of the initial state first, at step 0, as `dvi run`
        writes it); read them with records() or probe_frame(). Ctrl-C raises
        KeyboardInterrupt after the current step; the model stays usable and
        keeps the rows recorded so far. A failing step raises (NumericError
        for a blow-up, with the health monitor's text)."""
        if record and not self._recorded_start and self._m.step_count == 0:
            self._m.record_all()
            self._recorded_start = True
        try:
            self._m.step(n, record)
        finally:
            if record:
                self._collect()

    def run(self, duration=None, record=False):
        """run(duration=None, record=False) -> None

        Steps until the simulated time reaches duration (s; None: the
        scene's duration), the steps counted as `dvi run` counts them
        (duration/dt, rounded to a whole number within 1e-9, else up).
        record as for step()."""
        if duration is None:
            duration = self._settings["duration"]
        target = _steps_for(float(duration), self._settings["dt"])
        self.step(max(0, target - self._m.step_count), record)

    @property
    def time(self):
        """Simulated time (s): the step count times the scene's dt."""
        return self._m.time

    @property
    def step_count(self):
        """Steps taken since creation (or those of the state loaded)."""
        return self._m.step_count

    @property
    def dt(self):
        """The step (s)."""
        return self._settings["dt"]

    @property
    def not_converged(self):
        """Steps of this object whose solver missed its tolerance (taken all the same)."""
        return self._m.not_converged

    # ---- bodies, contacts, statistics -----------------------------------------------

    @property
    def body_names(self):
        """The scene's names of the bodies in creation order ("wheel_LF", "grains[3]", "bodies[2]" when unnamed)."""
        if self._names is None:
            self._names = self._m.body_names()
        return list(self._names)

    def body_index(self, name):
        """body_index(name) -> int: the row of a body in the state arrays; InputError for an unknown name."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise _error(_core.InputError, "invalid_arg", f"no body named {name!r}") from None

    @property
    def positions(self):
        """Centres of mass (n, 3), m, world frame (a copy)."""
        return self._m.state(0)

    @property
    def orientations(self):
        """Orientations (n, 4): unit quaternions in the library's order (w, x, y, z) (a copy)."""
        return self._m.state(1)

    @property
    def velocities(self):
        """Linear velocities (n, 3), m/s, world frame (a copy)."""
        return self._m.state(2)

    @property
    def angular_velocities(self):
        """Angular velocities (n, 3), rad/s, world frame (a copy)."""
        return self._m.state(3)

    @property
    def contacts(self):
        """The last step's contacts, k of them, as a dict of arrays: body_a, body_b (int32, rows of the
        state arrays; the normal points from a to b), point (k, 3) m, normal (k, 3), distance (k,) m
        (signed gap at collision), force (k, 3) N on body_b (its opposite on body_a)."""
        return self._m.contacts()

    @property
    def stats(self):
        """The last step's statistics (dict; dvi_step_stats, docs/world.md)."""
        return self._m.stats()

    @property
    def health(self):
        """The health monitor's findings (dict; docs/health.md): 'raised' maps each kind found (energy,
        escape, penetration, joint, blowup, chatter, audit, hover) to (first step, text)."""
        return self._m.health()

    # ---- probes -----------------------------------------------------------------------

    @property
    def probes(self):
        """The scene's probes: {name: column names} (time first), in the scene's order."""
        return {p["name"]: list(p["columns"]) for p in self._info}

    @property
    def probe_info(self):
        """The probes' descriptions: a list of dicts (name, title, every, interval, columns, units)."""
        return [dict(p) for p in self._info]

    def _index(self, name):
        for i, p in enumerate(self._info):
            if p["name"] == name:
                return i
        names = ", ".join(p["name"] for p in self._info)
        raise _error(_core.InputError, "invalid_arg", f"no probe named {name!r} (probes: {names})")

    def sample(self, name):
        """sample(name) -> ndarray: the probe's values now, time first (columns,)."""
        return self._m.sample(self._index(name))

    def _collect(self):
        for rows, new in zip(self._rows, self._m.take_records()):
            if len(new):
                rows.append(new)

    def records(self):
        """records() -> {probe name: (column names, ndarray (rows, columns))}: the rows recorded by
        step(..., record=True) and run(..., record=True), the rows `dvi run` writes to NAME.csv."""
        import numpy as np

        out = {}
        for p, rows in zip(self._info, self._rows):
            a = np.concatenate(rows) if rows else np.zeros((0, len(p["columns"])))
            out[p["name"]] = (list(p["columns"]), a)
        return out

    def clear_records(self):
        """clear_records() -> None: forgets the recorded rows."""
        self._rows = [[] for _ in self._info]

    def probe_frame(self, name):
        """probe_frame(name) -> pandas.DataFrame: the recorded rows of one probe, its column names as
        the frame's (needs pandas)."""
        import pandas

        columns, rows = self.records()[self._info[self._index(name)]["name"]]
        return pandas.DataFrame(rows, columns=columns)

    # ---- checkpoints ---------------------------------------------------------------------

    def save_state(self):
        """save_state() -> bytes: the complete dynamic state (dvi_model_save_state), the blob `dvi run`
        writes as checkpoint/state-STEP.bin."""
        return self._m.save_state()

    def load_state(self, blob):
        """load_state(blob) -> None: restores a saved state into this model (built from the same scene);
        the next steps are bit-identical to those of the model saved. InputError for a state of another
        structure or a damaged one."""
        self._m.load_state(blob)

    def save(self, path):
        """save(path) -> None: writes save_state() to a file (FileError when it cannot be written)."""
        blob = self._m.save_state()
        try:
            with open(path, "wb") as f:
                f.write(blob)
        except OSError as e:
            raise _error(_core.FileError, "io", f"{os.fspath(path)}: {e.strerror or e}") from None

    def load(self, path):
        """load(path) -> None: restores the state a file holds (save(), or `dvi run`'s
        checkpoint/state-STEP.bin); FileError when it cannot be read."""
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError as e:
            raise _error(_core.FileError, "io", f"{os.fspath(path)}: {e.strerror or e}") from None
        self._m.load_state(blob)
