#!/usr/bin/env python3
"""tools/render_frame.py on tiny runs of `dvi run`: the SVG holds one circle
per sphere body in the crop box and one polygon per visible triangle (back
faces of closed shapes left out), binary and ASCII frames give the same
picture; tools/paraview_load.py is valid Python.

    python3 tests/check_render_frame.py SOURCE_DIR DVI_EXECUTABLE
"""
import ast
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    src, dvi = sys.argv[1], sys.argv[2]
    for name in ("paraview_load.py", "render_frame.py"):
        path = os.path.join(src, "tools", name)
        with open(path) as f:
            ast.parse(f.read(), path)
    render = [sys.executable, os.path.join(src, "tools", "render_frame.py")]
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append("%s: %r, expected %r" % (what, got, want))

    with tempfile.TemporaryDirectory() as tmp:
        def run(scene, out, *extra):
            subprocess.run([dvi, "run", os.path.join(src, "examples", "scenes", scene), "--out",
                            os.path.join(tmp, out), "--quiet", "--vtk-every", "1"] + list(extra), check=True)

        def picture(out, *extra):
            svg = os.path.join(tmp, out + ".svg")
            subprocess.run(render + [os.path.join(tmp, out), "--frame", "0", "--out", svg] + list(extra), check=True)
            with open(svg) as f:
                text = f.read()
            root = ET.fromstring(text)
            circles = len(root.findall(".//" + NS + "circle"))
            polygons = len(root.findall(".//" + NS + "polygon"))
            check(out + " data-spheres", root.get("data-spheres"), str(circles))
            check(out + " data-polygons", root.get("data-polygons"), str(polygons))
            return circles, polygons, text

        # ten spheres on a plane: ten circles, the plane's two triangles
        run("sphere_stack_10.json", "stack", "--duration", "0.01")
        check("stack", picture("stack", "--max-edge", "0")[:2], (10, 2))
        # cropped to z <= 0.55: the spheres at z = 0.1, 0.3 and 0.5
        check("stack cropped", picture("stack", "--max-edge", "0", "--crop=-1,1,-1,1,0,0.55")[:2], (3, 2))
        # the plane split into pieces of at most 0.1 m: more polygons, same circles
        c, p, _ = picture("stack", "--max-edge", "0.1", "--crop=-1,1,-1,1,0,0.55")
        check("stack split circles", c, 3)
        if p <= 2:
            failures.append("stack split: %d polygons, expected more than 2" % p)
        # the fixed plane translucent: its two polygons carry the opacity
        text = picture("stack", "--max-edge", "0", "--static-opacity", "0.5")[2]
        check("translucent plane", text.count('fill-opacity="0.50"'), 2)
        # a box on a plane, seen from (-60°, 25°): its +x, -y and +z faces
        # (2 triangles each) and the plane's 2 triangles; no circle
        run("sliding_box.json", "box", "--duration", "0.001")
        c, p, binary = picture("box", "--max-edge", "0")
        check("box", (c, p), (0, 8))
        # seen from below (elevation -30°): -z instead of +z, still 6 + 2
        check("box from below", picture("box", "--max-edge", "0", "--view=-60,-30")[:2], (0, 8))
        # the same frame written as text: the same picture
        run("sliding_box.json", "box_ascii", "--duration", "0.001", "--vtk-ascii")
        ascii_svg = picture("box_ascii", "--max-edge", "0")[2]
        check("box ascii = binary", ascii_svg == binary, True)
    for f in failures:
        print("FAIL:", f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
