#!/usr/bin/env python3
"""Checks that tests/null_args_table.h (the table of tests/test_null_args.c)
names every function that include/dvi/*.h declares with DVI_API, once, with
as many pointer arguments as the declaration has.

Usage: check_null_args.py SOURCE_ROOT. Exit status 0 when they agree; 1
with the differences listed."""
import glob
import os
import re
import sys


def declared(root):
    funcs = {}
    for header in sorted(glob.glob(os.path.join(root, "include", "dvi", "*.h"))):
        text = open(header, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        for m in re.finditer(r"DVI_API\s+[^;{()]*?\b(dvi_\w+)\s*\(([^;{]*?)\)", text, flags=re.S):
            args = " ".join(m.group(2).split())
            params = [] if args in ("", "void") else [a.strip() for a in args.split(",")]
            funcs[m.group(1)] = (os.path.basename(header), sum(1 for a in params if "*" in a or "[" in a))
    return funcs


def tabled(root):
    rows = {}
    path = os.path.join(root, "tests", "null_args_table.h")
    for line in open(path, encoding="utf-8"):
        m = re.match(r"ENTRY\((\w+), (\d+), (ST|VOID|OTHER), \"([RO]*)\",", line)
        if m:
            if m.group(1) in rows:
                rows[m.group(1)] = None  # listed twice
            else:
                rows[m.group(1)] = int(m.group(2))
    return rows


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    funcs, rows = declared(root), tabled(root)
    problems = []
    for name, (header, pointers) in sorted(funcs.items()):
        if name not in rows:
            problems.append("%s (%s): not in tests/null_args_table.h" % (name, header))
        elif rows[name] is None:
            problems.append("%s: listed more than once" % name)
        elif rows[name] != pointers:
            problems.append("%s (%s): %d pointer arguments, the table says %d" % (name, header, pointers, rows[name]))
    for name in sorted(set(rows) - set(funcs)):
        problems.append("%s: in the table, declared in no header" % name)
    for p in problems:
        print(p)
    print("%d public functions, %d in the table" % (len(funcs), len(rows)))
    return 1 if problems or not funcs else 0


if __name__ == "__main__":
    sys.exit(main())
