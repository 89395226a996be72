#!/usr/bin/python3
"""Writes docs/python-api.md, the Python package's API reference, from its
docstrings: every name of dvicontact.__all__ (functions, classes with their
public methods and properties, exception classes), in that order.

    PYTHONPATH=build-release/python /usr/bin/python3 tools/python_api_doc.py [--check] [OUT]

OUT defaults to docs/python-api.md. With --check nothing is written: the
exit status is 1, with a message, when OUT differs from what would be
written (the suite docs runs it so, as check_python_api_doc), so the
reference cannot fall behind the docstrings.
"""

import inspect
import os
import sys


def doc_of(obj):
    d = inspect.getdoc(obj) or ""
    return d.strip()


def signature_line(name, obj, doc):
    """The signature: the docstring's first line when it names the object
    (the C extension's convention), else inspect's."""
    short = name.rsplit(".", 1)[-1]
    if doc.startswith(short + "("):
        # the signature may run over several lines: up to its closing parenthesis's line
        depth, end = 0, len(doc)
        for i, ch in enumerate(doc):
            depth += (ch == "(") - (ch == ")")
            if depth == 0 and ch == ")":
                nl = doc.find("\n", i)
                end = nl if nl >= 0 else len(doc)
                break
        sig = " ".join(doc[:end].split())
        return sig, doc[end:].strip()
    try:
        return short + str(inspect.signature(obj)), doc
    except (TypeError, ValueError):
        return short, doc


def block(text):
    """A docstring as a fenced block (its layout kept)."""
    return "```text\n" + text + "\n```\n" if text else ""


def members(cls):
    out = []
    for n, v in sorted(vars(cls).items()):
        if n.startswith("_") and n != "__init__":
            continue
        if n == "__init__":
            continue
        if isinstance(v, property):
            out.append((n, "property", v))
        elif isinstance(v, (staticmethod, classmethod)):
            out.append((n, "method", v.__func__))
        elif callable(v) or inspect.ismethoddescriptor(v):
            out.append((n, "method", v))
        elif inspect.isdatadescriptor(v) or inspect.isgetsetdescriptor(v) or inspect.ismemberdescriptor(v):
            out.append((n, "property", v))
    return out


def render(pkg):
    lines = [
        "# Python API reference",
        "",
        "Generated from the docstrings of the package `dvicontact` "
        f"(version {pkg.__version__}) by `tools/python_api_doc.py`; the guide is "
        "[python.md](python.md). Do not edit: change the docstring and run "
        "`PYTHONPATH=build-release/python /usr/bin/python3 tools/python_api_doc.py`.",
        "",
    ]
    names = list(pkg.__all__)
    lines.append("Contents: " + ", ".join(f"[`{n}`](#{n.lower()})" for n in names))
    lines.append("")
    for n in names:
        obj = getattr(pkg, n)
        doc = doc_of(obj)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            bases = ", ".join(b.__name__ for b in obj.__bases__)
            lines += [f"## {n}", "", f"Exception, a subclass of {bases}.", "", block(doc)]
            continue
        if inspect.isclass(obj):
            sig, rest = signature_line(n, obj, doc)
            if sig == n:
                try:
                    sig = n + str(inspect.signature(obj))
                except (TypeError, ValueError):
                    pass
            lines += [f"## {n}", "", f"`{sig}`", "", block(rest)]
            for m, kind, v in members(obj):
                mdoc = doc_of(v)
                if kind == "property":
                    lines += [f"### {n}.{m}", "", "Property.", "", block(mdoc)]
                else:
                    msig, mrest = signature_line(m, v, mdoc)
                    if msig.startswith(m + "(self"):
                        msig = m + "(" + msig[len(m) + 6:].lstrip(", ")
                    lines += [f"### {n}.{m}", "", f"`{msig}`", "", block(mrest)]
            continue
        sig, rest = signature_line(n, obj, doc)
        lines += [f"## {n}", "", f"`{sig}`", "", block(rest)]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    here = os.path.dirname(os.path.abspath(__file__))
    out = args[0] if args else os.path.join(here, "..", "docs", "python-api.md")
    import dvicontact

    text = render(dvicontact)
    if check:
        try:
            with open(out, encoding="utf-8") as f:
                old = f.read()
        except OSError as e:
            print(f"python_api_doc: {out}: {e.strerror}", file=sys.stderr)
            return 1
        if old != text:
            print(f"python_api_doc: {out} is not the package's docstrings (regenerate it: "
                  "PYTHONPATH=build-release/python /usr/bin/python3 tools/python_api_doc.py)", file=sys.stderr)
            return 1
        return 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
