"""dvicontact: nonsmooth rigid multibody dynamics with frictional contact.

The Python package of the dvicontact C library (docs/python.md): problems
from NumPy and SciPy solved by any of the library's solvers, scene files and
worlds stepped with their states and probes as NumPy arrays, and studies.
Errors are exceptions carrying the library's message: InputError (a
ValueError) for bad input, NumericError for numeric failures, FileError (an
OSError) for files.
"""

from ._core import Error, FileError, InputError, NumericError, solvers, version
from .model import Model, Scene
from .ccp import Problem, Result, Solver, evaluate, read_ccp, read_fclib, solve
from .world import Body, Joint, World, study

__version__ = version()

__all__ = [
    # exceptions
    "Error",
    "InputError",
    "NumericError",
    "FileError",
    # the solver layer
    "Problem",
    "Solver",
    "Result",
    "solve",
    "evaluate",
    "read_ccp",
    "read_fclib",
    "solvers",
    # scenes and models
    "Scene",
    "Model",
    # worlds built in Python
    "World",
    "Body",
    "Joint",
    # studies
    "study",
    "version",
]
