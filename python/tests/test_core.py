"""The package's base: version, the solver registry, the exception classes."""

import subprocess
import os

import dvicontact


def test_version_is_the_library_s():
    # the library's version string, as `dvi --version` prints it
    out = subprocess.run([os.environ["DVI_EXE"], "--version"], capture_output=True, text=True, check=True).stdout
    assert dvicontact.__version__ == dvicontact.version()
    assert dvicontact.version() in out


def test_solvers_lists_the_registry():
    names = [s["name"] for s in dvicontact.solvers()]
    assert names == ["apgd", "pgs", "jacobi", "lemke", "nsgs", "newton", "desaxce"]
    laws = {s["name"]: s["law"] for s in dvicontact.solvers()}
    assert laws["apgd"] == "ccp" and laws["newton"] == "coulomb"
    assert all(s["summary"] for s in dvicontact.solvers())


def test_exception_classes():
    assert issubclass(dvicontact.InputError, ValueError)
    assert issubclass(dvicontact.InputError, dvicontact.Error)
    assert issubclass(dvicontact.NumericError, ArithmeticError)
    assert issubclass(dvicontact.FileError, OSError)
