#!/usr/bin/env python3
"""The library's layers, checked from its #include lines and its object files
(docs/architecture.md).

    python3 tests/check_layers.py SOURCE_ROOT [--build BUILD_DIR] [--cc CC]
        check; exit 1 on a violation, a circle or a stale graph in the doc
    python3 tests/check_layers.py SOURCE_ROOT --graph    # the folder graph, as a table
    python3 tests/check_layers.py SOURCE_ROOT --update-doc   # write it into docs/architecture.md

Each file of the library belongs to the layer of its folder; a public header
(include/dvi/*.h) to the layer it describes. A file may include a file of
its own layer or of a layer that its layer stands on (LAYERS below); the
programs (tool/, examples/, bench/, studies/) the public headers, base/ and
the programs' headers. Tests may include anything. Every quoted #include must
resolve to a file of the tree, so a header that moves cannot hide from the
check.

With --build, the library's object files in BUILD_DIR (src_LAYER_NAME.c.o,
as meson names them) are read with nm: every symbol a layer's object leaves
undefined must be defined by an object of the same layer or of a layer below
it, or outside the library (libc, BLAS, ...). A call up a layer is caught
there even when no #include shows it.

Names: with --build, every symbol the layers' objects define for the linker
whose name starts with dvi_ must be named in a public header
(include/dvi/*.h): dvi_ is the public API's prefix, and an internal name
takes its layer's (PREFIX below).

Circles: the library's files under src/ are joined by their includes and,
with --build, by their calls (file A.c to B.c when A.c's object uses a
symbol B.c's defines); two or more files that reach each other are a
circle, and any circle not listed in KNOWN_CIRCLES fails (a listed one that
is gone fails too, so the list stays true).

The self-test runs first: it plants upward and sideways includes, an upward
call and a circle (in a symbol table, and with --cc in two object files it
compiles) and fails unless each is caught.
"""
import os
import re
import shutil
import subprocess
import sys

# layer -> the layers it may include (itself included)
LAYERS = {
    "base": {"base"},
    "ccp": {"base", "ccp"},
    "collision": {"base", "collision"},
    "world": {"base", "ccp", "collision", "world"},
    "terrain": {"base", "ccp", "collision", "world", "terrain"},
    "output": {"base", "ccp", "collision", "world", "terrain", "output"},
    "io": {"base", "ccp", "collision", "world", "terrain", "output", "io"},
    "dist": {"base", "ccp", "collision", "world", "terrain", "output", "io", "dist"},
}
PUBLIC = {  # include/dvi/NAME -> layer
    "base.h": "base",
    "ccp.h": "ccp",
    "shape.h": "collision",
    "world.h": "world",
    "terrain.h": "terrain",
    "io.h": "io",
    "scene.h": "io",
    "output.h": "output",
    "dvi.h": "dist",
    "dist.h": "dist",
}
# layer -> the prefix of its internal names (docs/architecture.md)
PREFIX = {"base": "base_", "ccp": "ccp_", "collision": "col_", "world": "wld_", "output": "out_", "io": "io_", "dist": "dst_"}
PROGRAMS = ("tool", "examples", "bench", "studies")
# programs that reach into a layer's internal headers, as a test does
EXEMPT = {
    "bench/bench_collision.c": "times the collision layer's internal calls (broad and narrow phase) directly",
}
# files of which the build compiles one or the other
EITHER = {"src/dist/dist.c": "src/dist/dist_none.c", "src/dist/dist_none.c": "src/dist/dist.c"}
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


def room_of(root, path):
    """src/LAYER/NAME.c or .h for a file of the library, else None."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) == 3 and parts[1] in LAYERS:
        return rel
    return None


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
    problems, edges, room_edges = [], {}, {}
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
            a, b = room_of(root, path), room_of(root, target)
            if a and b and a != b:
                room_edges.setdefault(a, set()).add(b)
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
    scan.room_edges = room_edges
    scan.rooms = sorted({room_of(root, f) for f in files if room_of(root, f)})
    return problems, edges


# circles that are known and allowed for now, each with why (files, as room_of names them)
KNOWN_CIRCLES = {}
OBJECT = re.compile(r"^src_([a-z]+)_(.+)\.c\.o$")


def objects(root, build):
    """{file: object path} of the library's objects under build (meson's
    BUILD/TARGET.p/src_LAYER_NAME.c.o), for the .c files of src/ that exist."""
    found = {}
    for dirpath, dirnames, names in os.walk(build):
        dirnames.sort()
        for n in sorted(names):
            m = OBJECT.match(n)
            if not m or m.group(1) not in LAYERS:
                continue
            room = f"src/{m.group(1)}/{m.group(2)}.c"
            if os.path.isfile(os.path.join(root, room)):
                found.setdefault(room, os.path.join(dirpath, n))
    return found


def symbol_table(objs, nm="nm"):
    """{file: (defined, undefined)}: the global symbols each object defines
    and those it leaves undefined, from `nm -P`."""
    table = {}
    for room, path in sorted(objs.items()):
        out = subprocess.run([nm, "-P", path], capture_output=True, text=True, check=True).stdout
        defined, undefined = set(), set()
        for line in out.splitlines():
            f = line.split()
            if len(f) < 2:
                continue
            if f[1] == "U":
                undefined.add(f[0])
            elif f[1].isupper() or f[1] == "i":  # i: a GNU indirect function (target_clones)
                defined.add(f[0])
        table[room] = (defined, undefined)
    return table


def check_symbols(table):
    """(problems, call edges between files) of a symbol table: an undefined
    symbol of a layer's object defined in an object of a layer it may not use."""
    where = {}
    for room, (defined, _) in table.items():
        for sym in defined:
            where.setdefault(sym, room)
    problems, calls = [], {}
    for room, (_, undefined) in sorted(table.items()):
        here = room.split("/")[1]
        for sym in sorted(undefined):
            there_room = where.get(sym)
            if there_room is None or there_room == room:
                continue  # outside the library (libc, BLAS, ...)
            calls.setdefault(room, set()).add(there_room)
            there = there_room.split("/")[1]
            if there not in LAYERS[here]:
                problems.append(f"{room} ({here}) calls {sym}, defined in {there_room} ({there}): not allowed")
    return problems, calls


def public_names(root):
    """Every dvi_ name the public headers mention."""
    names = set()
    inc = os.path.join(root, "include", "dvi")
    for n in sorted(os.listdir(inc)) if os.path.isdir(inc) else []:
        if n.endswith(".h"):
            names |= set(re.findall(r"\bdvi_\w+", open(os.path.join(inc, n), encoding="utf-8").read()))
    return names


def check_prefix(table, public):
    """A problem for each dvi_ symbol an object defines that no public header names."""
    problems = []
    for room, (defined, _) in sorted(table.items()):
        layer = room.split("/")[1]
        prefix = PREFIX.get(layer, layer + "_")
        for sym in sorted(defined):
            name = sym.split(".")[0]  # name.resolver, name.avx2.0: the clones of one function
            if name.startswith("dvi_") and name not in public and sym == name:
                problems.append(f"{room} defines {sym}, which include/dvi/ does not name: dvi_ is the public "
                                f"API's prefix; an internal name of the {layer} layer starts with {prefix}")
    return problems


def circles(edges):
    """The sets of two or more files that reach each other (Tarjan's strongly
    connected components, iterative), each sorted, in sorted order."""
    nodes = sorted(set(edges) | {b for bs in edges.values() for b in bs})
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def circle_problems(found, known, with_calls):
    """Problems for the circles found: those not known, and (when the calls
    were read, which the known ones need) the known ones that are gone."""
    problems = []
    for c in found:
        if frozenset(c) not in known:
            problems.append("circle of %d files: %s" % (len(c), ", ".join(c)))
    if with_calls:
        for k in sorted(known, key=sorted):
            if list(sorted(k)) not in found:
                problems.append("KNOWN_CIRCLES lists %s, which is no circle any more: remove it" % ", ".join(sorted(k)))
    return problems


ORDER = ["base", "ccp", "collision", "world", "terrain", "output", "io"]


def graph_table(edges):
    """The folder graph as docs/architecture.md prints it."""
    lines = ["| from \\ to | " + " | ".join(ORDER) + " |", "|---" * (len(ORDER) + 1) + "|"]
    for a in ORDER + list(PROGRAMS):
        key = a if a in ORDER else "program:" + a
        row = [str(edges.get((key, b), "")) for b in ORDER]
        lines.append(f"| {a} | " + " | ".join(row) + " |")
    return lines


def doc_table(text):
    """(start, end) line numbers of the graph table in the doc's text, or None."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("| from \\ to |"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            return i, j
    return None


def compile_pair(tmp, cc):
    """Two object files, as meson would name them, whose base object calls up
    into the solver layer and whose two objects call each other; None if cc fails."""
    src = {"src/base/low.c": "int ccp_up(int);\nint base_low(int x);\nint base_low(int x) { return ccp_up(x) + 1; }\n",
           "src/ccp/up.c": "int base_low(int);\nint ccp_up(int x);\nint ccp_up(int x) { return x > 0 ? base_low(x - 1) : 0; }\n"}
    objdir = os.path.join(tmp, "build", "libx.a.p")
    os.makedirs(objdir, exist_ok=True)
    for rel, text in src.items():
        p = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(text)
        obj = os.path.join(objdir, rel.replace("/", "_") + ".o")
        try:
            r = subprocess.run(cc + ["-c", p, "-o", obj], capture_output=True, text=True)
        except OSError as e:
            print(f"check_layers: the self-test could not run the compiler {' '.join(cc)}: {e}")
            return None
        if r.returncode != 0:
            print("check_layers: the self-test could not compile its objects:", r.stderr.strip())
            return None
    return os.path.join(tmp, "build")


def self_test(cc=None, nm="nm"):
    """The check must catch an upward include and a sibling include, and pass a
    downward one; catch an upward call and a circle in a symbol table; and,
    given a compiler, the same in two object files read with nm."""
    import tempfile
    ok = True
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
        put("src/world/a.h", '#include "b.h"\n')
        put("src/world/b.h", '#include "a.h"\n')
        problems, _ = scan(tmp)
        want = ['src/collision/c.c (collision) includes "w.h" (world): not allowed',
                'src/collision/c.c (collision) includes "k.h" (ccp): not allowed']
        if problems != want:
            print("check_layers: the self-test expected", want, "and got", problems)
            ok = False
        found = circles(scan.room_edges)
        if found != [["src/world/a.h", "src/world/b.h"]]:
            print("check_layers: the self-test expected the include circle of a.h and b.h and got", found)
            ok = False
        # a symbol table: base calls up into ccp; ccp's two objects call each other
        table = {"src/base/e.c": ({"base_e"}, {"ccp_s", "memcpy"}),
                 "src/ccp/s.c": ({"ccp_s"}, {"base_e", "ccp_t"}),
                 "src/ccp/t.c": ({"ccp_t"}, {"ccp_s", "cblas_ddot"}),
                 "src/world/w.c": ({"world_w"}, {"ccp_t", "base_e"})}
        problems, calls = check_symbols(table)
        want = ["src/base/e.c (base) calls ccp_s, defined in src/ccp/s.c (ccp): not allowed"]
        if problems != want:
            print("check_layers: the self-test expected", want, "and got", problems)
            ok = False
        if circles(calls) != [["src/base/e.c", "src/ccp/s.c", "src/ccp/t.c"]]:
            print("check_layers: the self-test expected the circle of e, s and t and got", circles(calls))
            ok = False
        want = ["src/ccp/s.c defines dvi_hidden, which include/dvi/ does not name: dvi_ is the public API's "
                "prefix; an internal name of the ccp layer starts with ccp_"]
        table["src/ccp/s.c"][0].update({"dvi_open", "dvi_hidden", "dvi_open.resolver"})
        if check_prefix(table, {"dvi_open"}) != want:
            print("check_layers: the self-test expected", want, "and got", check_prefix(table, {"dvi_open"}))
            ok = False
        if circle_problems(circles(calls), {}, True) == []:
            print("check_layers: the self-test's circle was not reported")
            ok = False
        if circle_problems([], {frozenset({"src/ccp/s.c", "src/ccp/t.c"})}, True) == []:
            print("check_layers: a known circle that is gone was not reported")
            ok = False
        if cc:
            build = compile_pair(os.path.join(tmp, "objects"), cc)
            if build is None:
                return False
            root = os.path.join(tmp, "objects")
            objs = objects(root, build)
            problems, calls = check_symbols(symbol_table(objs, nm))
            want = ["src/base/low.c (base) calls ccp_up, defined in src/ccp/up.c (ccp): not allowed"]
            if problems != want or circles(calls) != [["src/base/low.c", "src/ccp/up.c"]]:
                print("check_layers: the self-test's objects gave", problems, "and circles", circles(calls),
                      "instead of", want, "and the circle of low and up")
                ok = False
    return ok


def option(name):
    """The value after --name in the arguments, or None."""
    args = sys.argv[2:]
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = os.path.abspath(sys.argv[1])
    build = option("--build")
    cc = option("--cc")
    nm = option("--nm") or shutil.which("nm") or "nm"
    if (build or cc) and not shutil.which(nm):
        print(f"check_layers: {nm} not found (binutils); it reads the object files")
        return 1
    if not self_test(cc.split() if cc else None, nm):
        return 1
    problems, edges = scan(root)
    files_n = scan.files
    room_edges = {a: set(b) for a, b in scan.room_edges.items()}
    table = graph_table(edges)
    if "--graph" in sys.argv[2:]:
        print("\n".join(table))
    doc_path = os.path.join(root, "docs", "architecture.md")
    text = open(doc_path, encoding="utf-8").read()
    where = doc_table(text)
    if "--update-doc" in sys.argv[2:] and where:
        lines = text.split("\n")
        lines[where[0]:where[1]] = table
        open(doc_path, "w", encoding="utf-8").write("\n".join(lines))
        text, where = "\n".join(lines), doc_table("\n".join(lines))
    if where is None:
        problems.append("docs/architecture.md: no include graph (a table headed '| from \\ to |')")
    elif text.split("\n")[where[0]:where[1]] != table:
        problems.append("docs/architecture.md: the include graph is stale; the tree gives\n" + "\n".join(table)
                        + "\n(python3 tests/check_layers.py SOURCE --update-doc writes it)")
    objs_n = 0
    if build:
        objs = objects(root, os.path.abspath(build))
        # a file built in place of another by the configuration (meson option
        # mpi: src/dist/dist.c with MPI, dist_none.c without): one of each pair
        missing = [r for r in scan.rooms if r.endswith(".c") and r not in objs
                   and not (r in EITHER and EITHER[r] in objs)]
        if missing:
            problems.append(f"{build}: no object file for " + ", ".join(missing)
                            + " (build the library first)")
        symbols = symbol_table(objs, nm)
        sym_problems, calls = check_symbols(symbols)
        problems += sym_problems + check_prefix(symbols, public_names(root))
        for a, bs in calls.items():
            room_edges.setdefault(a, set()).update(bs)
        objs_n = len(objs)
    found = circles(room_edges)
    problems += circle_problems(found, KNOWN_CIRCLES, bool(build))
    in_circles = sum(len(c) for c in found)
    for p in problems:
        print(p, flush=True)
    print("check_layers: %d circle(s) among the library's files (%d files)%s" % (
        len(found), in_circles, "" if build else ", by the includes only (no --build: the calls not read)"))
    for c in found:
        why = KNOWN_CIRCLES.get(frozenset(c))
        print("    " + ", ".join(c) + (f"  (known: {why})" if why else ""))
    n = files_n
    if problems:
        print(f"check_layers: {len(problems)} problem(s) in {n} files" + (f" and {objs_n} objects" if build else ""))
        return 1
    print(f"check_layers: {n} files" + (f", {objs_n} objects" if build else "")
          + ": every include and call points down or stays in its layer; no circle but the known ones"
          + ("; every dvi_ symbol public" if build else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
