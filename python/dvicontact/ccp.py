"""The solver layer: cone complementarity problems from NumPy and SciPy
arrays or files, solved by any of the library's solvers (docs/python.md,
"Solving a problem of your own").

    find gamma in K,  u = N gamma + r in K*,  <gamma, u> = 0

with N = D' M^-1 D + diag(compliance) (the factor form) or
N = W + diag(compliance) (the Delassus form), K a product of one cone per
block (include/dvi/ccp.h).
"""

import numpy as np

from . import _core
from ._core import InputError, Result, Solver, evaluate

__all__ = ["Problem", "Result", "Solver", "evaluate", "read_ccp", "read_fclib", "solve"]

_KINDS = _core._block_rows()  # name -> (value, rows)


def _csc(name, m, shape=None):
    """m (scipy.sparse, any format, or a dense 2-D array) as the tuple
    (rows, cols, indptr, indices, data) of a CSC matrix with sorted indices."""
    try:
        import scipy.sparse as sp
    except ImportError:  # dense arrays work without SciPy
        sp = None
    if sp is not None and sp.issparse(m):
        c = sp.csc_matrix(m, copy=True)
        c.sum_duplicates()  # sorts the indices too
        if np.iscomplexobj(c.data):
            raise TypeError(f"{name}: must be an array of real numbers (got dtype {c.data.dtype})")
        return (c.shape[0], c.shape[1], c.indptr, c.indices, c.data)
    a = np.asarray(m)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name}: must be an array of real numbers (got dtype {a.dtype})")
    if a.ndim != 2:
        raise InputError(f"{name}: must be a 2-D matrix (got shape {a.shape})")
    col, row = np.nonzero(a.T)  # column by column, rows increasing in each
    indptr = np.zeros(a.shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(col, minlength=a.shape[1]), out=indptr[1:])
    return (a.shape[0], a.shape[1], indptr, row, a.T[col, row])


def _per_block(name, value, count):
    if value is None:
        return np.zeros(count)
    v = np.asarray(value)
    if v.ndim == 0 and v.dtype.kind in "iuf":
        return np.full(count, float(v))
    return value  # checked (shape, dtype) by the extension


class Problem(_core._Problem):
    """Problem(kinds, r, *, mu=0.0, mu_spin=0.0, mu_roll=0.0, D=None, inv_mass=None,
            mass=None, inertia=None, inv_mass_rigid=None, frames=None, W=None, compliance=None)

    A cone complementarity problem built from arrays; the object keeps its own
    copies. kinds: one name per block, "bilateral" (1 row, free), "frictionless"
    (1 row), "friction" (3 rows: normal, two tangents; Coulomb cone of mu) or
    "friction_rolling" (6 rows: friction, then spin and two rolling rows, cones
    of mu_spin and mu_roll), or a single name for every block (the block count
    then follows from len(r)). r: (rows,), the constraint velocities without
    impulses (m/s). mu, mu_spin, mu_roll: a number or one per block.

    The operator, one of two forms:
      D (6 bodies x rows; scipy.sparse in any format, or a dense array) with
      M^-1 as inv_mass (bodies, 6, 6), or as rigid bodies: mass (bodies,) (kg)
      and world-frame inertia (bodies, 3, 3) (kg m^2), or inv_mass_rigid
      (bodies, 10): 1/m, then the inverse inertia row-major; contact blocks may
      instead be given by their frames, their columns of D left empty (D may
      then be omitted): frames = {"block": (n,) block of each contact,
      increasing; "body": (n, 2) bodies a, b (-1: none, e.g. the ground);
      "frame": (n, 3, 3) rows normal, t1, t2 (world); "arm": (n, 2, 3) contact
      point minus the centres of a and b; "ell": (n,) scale of the angular rows
      of friction_rolling blocks, optional}, the rows of ccp.h's dvi_ccp_frames;
      or W (rows x rows, symmetric), the Delassus matrix.
    compliance: (rows,) >= 0 added to the diagonal of N, or None.

    Raises InputError with the library's text for a problem it refuses
    ("blocks[3].mu: must be >= 0 (got -0.2)", "r: must have shape (12,) (got
    (11,))", a NaN), TypeError for a dtype that is not real numbers. A problem is
    immutable; read one from a file with read_fclib or read_ccp."""

    def __init__(self, kinds, r, *, mu=0.0, mu_spin=0.0, mu_roll=0.0, D=None, inv_mass=None, mass=None,
                 inertia=None, inv_mass_rigid=None, frames=None, W=None, compliance=None):
        if isinstance(kinds, str):  # every block of this kind: as many as r has rows for
            per = _KINDS[kinds][1] if kinds in _KINDS else 1
            if np.ndim(r) != 1 or np.shape(r)[0] % per:
                raise InputError(f"r: must have shape (n,) with n a multiple of {per} for kinds={kinds!r} "
                                 f"(got {np.shape(r)})")
            kinds_list = [kinds] * (np.shape(r)[0] // per)
        else:
            kinds_list = list(kinds)
        codes = np.empty(len(kinds_list), dtype=np.int32)
        for i, k in enumerate(kinds_list):
            if k not in _KINDS:
                raise InputError(f"kinds[{i}]: unknown block kind {k!r} (kinds: {', '.join(_KINDS)})")
            codes[i] = _KINDS[k][0]
        n = len(codes)
        Ft = None
        if frames is not None:
            if W is not None:
                raise InputError("frames: only in the factor form (not with W)")
            unknown = set(frames) - {"block", "body", "frame", "arm", "ell"}
            if unknown:
                raise InputError(f"frames.{sorted(unknown)[0]}: unknown key (keys: block, body, frame, arm, ell)")
            missing = [k for k in ("block", "body", "frame", "arm") if k not in frames]
            if missing:
                raise InputError(f"frames.{missing[0]}: missing")
            Ft = (frames["block"], frames["body"], frames["frame"], frames["arm"], frames.get("ell"))
            if D is None:  # every column empty: 6 rows per body of the masses given
                nb = next((len(np.atleast_1d(x)) for x in (inv_mass, inv_mass_rigid, mass) if x is not None), 0)
                rows = sum(_KINDS[k][1] for k in kinds_list)
                D = (6 * nb, rows, np.zeros(rows + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        if (D is None) == (W is None):
            raise InputError("Problem: give exactly one of D (with inv_mass, or mass and inertia, or "
                             "inv_mass_rigid) and W")
        body_count = 0
        Dt = Wt = None
        if D is not None:
            Dt = D if isinstance(D, tuple) else _csc("D", D)
            if Dt[0] % 6:
                raise InputError(f"D: must have 6 rows per body (got {Dt[0]} rows)")
            body_count = Dt[0] // 6
            given = sum(x is not None for x in (inv_mass, inv_mass_rigid)) + (mass is not None or inertia is not None)
            if given != 1:
                raise InputError("Problem: with D give one of inv_mass, inv_mass_rigid, or mass and inertia")
            if mass is not None or inertia is not None:
                if mass is None or inertia is None:
                    raise InputError("Problem: mass and inertia go together")
                inv_mass_rigid = _core._inv_mass_rigid(np.atleast_1d(mass), inertia)
        else:
            if any(x is not None for x in (inv_mass, inv_mass_rigid, mass, inertia)):
                raise InputError("Problem: inv_mass, inv_mass_rigid, mass and inertia belong to the factor form (D)")
            Wt = _csc("W", W)
        self._set(codes, _per_block("mu", mu, n), _per_block("mu_spin", mu_spin, n),
                  _per_block("mu_roll", mu_roll, n), r, compliance, body_count, Dt, inv_mass, inv_mass_rigid, Wt, Ft)

    @property
    def form(self):
        """"factors" (D and M^-1) or "delassus" (W)."""
        return "factors" if self._D_csc is not None else "delassus"

    @property
    def D(self):
        """D as a scipy.sparse.csc_matrix (6 bodies x rows), as given (the columns of
        contacts given by frames empty), or None in the W form."""
        t = self._D_csc
        if t is None:
            return None
        import scipy.sparse as sp
        return sp.csc_matrix((t[4], t[3], t[2]), shape=(t[0], t[1]))

    @property
    def W(self):
        """The Delassus matrix as a scipy.sparse.csc_matrix (rows x rows), compliance
        not included: W itself, or D' M^-1 D in the factor form."""
        import scipy.sparse as sp
        t = self._W_csc
        if t is not None:
            return sp.csc_matrix((t[4], t[3], t[2]), shape=(t[0], t[1]))
        D = self.D
        if self.frames is not None:
            D = D + self._frame_columns()
        if self.inv_mass is not None:
            Minv = sp.block_diag(list(self.inv_mass), format="csc")
        else:
            blocks = []
            for b in self.inv_mass_rigid:
                m = np.zeros((6, 6))
                m[0, 0] = m[1, 1] = m[2, 2] = b[0]
                m[3:, 3:] = b[1:].reshape(3, 3)
                blocks.append(m)
            Minv = sp.block_diag(blocks, format="csc") if blocks else sp.csc_matrix((0, 0))
        return sp.csc_matrix(D.T @ Minv @ D)

    def _frame_columns(self):
        """The columns of D that the contacts given by frames stand for (ccp.h)."""
        import scipy.sparse as sp
        f = self.frames
        start = np.concatenate([[0], np.cumsum([_KINDS[k][1] for k in self.kinds])])
        ell = f["ell"] if f["ell"] is not None else np.ones(len(f["block"]))
        rows, cols, vals = [], [], []
        for c, blk in enumerate(f["block"]):
            for side, sign in ((0, -1.0), (1, 1.0)):
                body = f["body"][c, side]
                if body < 0:
                    continue
                for q in range(_KINDS[self.kinds[blk]][1]):
                    d = f["frame"][c, q % 3]
                    col = (np.concatenate([d, np.cross(f["arm"][c, side], d)]) if q < 3
                           else ell[c] * np.concatenate([np.zeros(3), d]))
                    rows += list(6 * body + np.arange(6))
                    cols += [start[blk] + q] * 6
                    vals += list(sign * col)
        return sp.csc_matrix((vals, (rows, cols)), shape=(6 * self.body_count, self.rows))

    def write_fclib(self, path, solution=None):
        """write_fclib(path, solution=None)

        Writes the problem as a local FCLIB problem (HDF5) other codes can solve:
        W = D' M^-1 D in the factor form, compliance added to its diagonal;
        frictionless blocks become contacts with mu = 0. solution (rows,) is
        written as /solution/r. InputError for bilateral and friction_rolling
        blocks (FCLIB's local problem has neither), FileError when the file
        cannot be written."""
        self._write_fclib(path, solution)

    def write_ccp(self, path, gamma0=None, solution=None):
        """write_ccp(path, gamma0=None, solution=None)

        Writes the problem as a CCP JSON file (docs/ccp-file.md), with the
        optional initial guess and reference solution, (rows,) each; reading it
        back gives the same bits. FileError when the file cannot be written."""
        self._write_ccp(path, gamma0, solution)

    def to_json(self, gamma0=None, solution=None):
        """to_json(gamma0=None, solution=None) -> str

        The problem as the text of a CCP JSON file (docs/ccp-file.md)."""
        return self._write_ccp(None, gamma0, solution)

    @classmethod
    def from_json(cls, text):
        """Problem.from_json(text) -> Problem

        A problem from the text of a CCP JSON file (str or bytes), or from the
        same as a dict. InputError with the reader's text ("r: expected 12
        numbers, got 11") for one it refuses."""
        if isinstance(text, dict):
            import json
            text = json.dumps(text)
        return _core._parse_ccp(cls, text)

    def __repr__(self):
        return f"<dvicontact.Problem {self.rows} rows, {self.block_count} blocks, {self.form} form>"


def read_fclib(path, delassus=False):
    """read_fclib(path, delassus=False) -> Problem

    The problem of an FCLIB file (HDF5, docs/fclib.md): contact a is friction
    block a (rows 3a, 3a+1, 3a+2: normal, tangents), r = q. Local problems give
    W (its symmetric part when the file's is not: Problem.fclib["symmetrized"];
    Solver.solve then solves the file's own W as `dvi solve` does); global ones
    the factor form when M is block-diagonal, else W = H' M^-1 H (always with
    delassus=True). Problem.solution and Problem.gamma0 hold the file's stored
    ones. InputError (a ValueError) for a file the reader refuses, FileError (an
    OSError) for one it cannot open; the message is the reader's."""
    return _core._read_fclib(Problem, path, bool(delassus))


def read_ccp(path):
    """read_ccp(path) -> Problem

    The problem of a CCP JSON file (docs/ccp-file.md), with its gamma0 and
    solution when it has them. InputError for a file the reader refuses (its
    text names the file and the place), FileError for one it cannot open."""
    return _core._read_ccp(Problem, path)


def solve(problem, solver="apgd", gamma0=None, **settings):
    """solve(problem, solver="apgd", gamma0=None, **settings) -> Result

    One solve with a new Solver(solver, **settings): see Solver and Solver.solve."""
    return Solver(solver, **settings).solve(problem, gamma0)
