#!/usr/bin/env python3
"""The library's layers, checked from its #include lines (docs/architecture.md).

    python3 tests/check_layers.py SOURCE_ROOT            # check; exit 1 on a violation
    python3 tests/check_layers.py SOURCE_ROOT --graph    # the folder graph, as a table

Each file of the library belongs to the layer of its folder; a public header
(include/dvi/*.h) to the layer it describes. A file may include a file of
its own layer or of a layer that its layer stands on (LAYERS below); the
programs (tool/, examples/, bench/, studies/) the public headers, base/ and
the programs' headers. Tests may include anything. Every quoted #include must
resolve to a file of the tree, so a header that moves cannot hide from the
check.
"""
import os
import re
import sys

# layer -> the layers it may include (itself included)
LAYERS = {
    "base": {"base"},
    "ccp": {"base", "ccp"},
    "collision": {"base", "collision"},
    "world": {"base", "ccp", "collision", "world"},
    "io": {"base", "ccp", "collision", "world", "io"},
}
PUBLIC = {  # include/dvi/NAME -> layer
    "base.h": "base",
    "ccp.h": "ccp",
    "shape.h": "collision",
    "world.h": "world",
    "io.h": "io",
    "scene.h": "io",
    "output.h": "io",
    "dvi.h": "io",
}
PROGRAMS = ("tool", "examples", "bench", "studies")
# programs that reach into a layer's internal headers, as a test does
EXEMPT = {
    "bench/bench_collision.c": "times the collision layer's internal calls (broad and narrow phase) directly",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(root, path):
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) == 3:
        return parts[1]
    if parts[0] == "include" and len(parts) == 3 and parts[1] == "dvi":
        return PUBLIC.get(parts[2], "?public")
    if parts[0] in PROGRAMS:
        return "program:" + parts[0]
    if parts[0] == "tests":
        return "tests"
    return "?" + rel


def resolve(root, src_dirs, path, name):
    # the include directories of the build: the file's own folder, include/,
    # the library's folders, and for programs and tests the programs' folders
    # (a study's folder too: studies/rover/ for rover_dep's headers)
    dirs = [os.path.dirname(path), os.path.join(root, "include")] + src_dirs
    for p in PROGRAMS:
        for dirpath, dirnames, _ in os.walk(os.path.join(root, p)):
            dirnames.sort()
            dirs.append(dirpath)
    for d in dirs:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return cand
    return None


def scan(root):
    """(problems, edges between layers) of the tree at root."""
    src_dirs = [os.path.join(root, "src", l) for l in LAYERS]
    files = []
    for top in ["src", "include"] + list(PROGRAMS) + ["tests"]:
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames.sort()
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith((".c", ".h"))]
    problems, edges = [], {}
    for path in files:
        here = layer_of(root, path)
        text = open(path, encoding="utf-8", errors="replace").read()
        for name in INCLUDE.findall(text):
            target = resolve(root, src_dirs, path, name)
            rel = os.path.relpath(path, root)
            if target is None:
                if here != "tests" or name.startswith("dvi/"):
                    problems.append(f'{rel}: #include "{name}" names no file of the tree')
                continue
            there = layer_of(root, target)
            if here != there:
                edges[(here, there)] = edges.get((here, there), 0) + 1
            if here == "tests" or rel.replace(os.sep, "/") in EXEMPT:
                continue
            if here.startswith("program:"):
                ok = there in PUBLIC.values() and target.startswith(os.path.join(root, "include")) \
                    or there == "base" or there.startswith("program:")
            elif here in LAYERS:
                ok = there in LAYERS[here]
            else:
                ok = False
            if not ok:
                problems.append(f'{rel} ({here}) includes "{name}" ({there}): not allowed')
    scan.files = len(files)
    return problems, edges


def self_test():
    """The check must catch an upward include and a sibling include, and pass a downward one."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        def put(rel, text):
            p = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").write(text)
        put("include/dvi/base.h", "")
        put("src/base/m.h", "")
        put("src/ccp/k.h", '#include "m.h"\n')
        put("src/world/w.h", '#include "k.h"\n#include "dvi/base.h"\n')
        put("src/collision/c.c", '#include "w.h"\n#include "k.h"\n')
        problems, _ = scan(tmp)
        want = ['src/collision/c.c (collision) includes "w.h" (world): not allowed',
                'src/collision/c.c (collision) includes "k.h" (ccp): not allowed']
        if problems != want:
            print("check_layers: the self-test expected", want, "and got", problems)
            return False
    return True


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if not self_test():
        return 1
    root = os.path.abspath(sys.argv[1])
    graph = "--graph" in sys.argv[2:]
    problems, edges = scan(root)
    files_n = scan.files
    if graph:
        order = ["base", "ccp", "collision", "world", "io"]
        print("| from \\ to | " + " | ".join(order) + " |")
        print("|---" * (len(order) + 1) + "|")
        for a in order + ["program:" + p for p in PROGRAMS]:
            row = [str(edges.get((a, b), "")) for b in order]
            print(f"| {a} | " + " | ".join(row) + " |")
    for p in problems:
        print(p, flush=True)
    n = files_n
    if problems:
        print(f"check_layers: {len(problems)} include(s) across the layers the wrong way, in {n} files")
        return 1
    print(f"check_layers: {n} files, every include points down or stays in its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
