#!/usr/bin/env python3
"""Renders one frame of a `dvi run` (its vtk/ directory) as an SVG picture.

    python3 tools/render_frame.py out/NAME/vtk --out frame.svg
        [--frame N|last] [--view=AZ,EL] [--crop=XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX]
        [--width PX] [--max-edge M] [--title TEXT] [--static-opacity A]

(write --view=… and --crop=… with "=": their values may start with a minus.)

It reads frames/bodies_N.vtp, frames/shapes_N.vtp (or a run over MPI
ranks' pieces of them, bodies_N_pR.vtp) and static.vtp (binary,
zlib-compressed or ASCII; docs/outputs.md) with the standard library only,
and draws an orthographic view from azimuth AZ and elevation EL (degrees;
default -60,25: from the front left, above): the sphere bodies as shaded
circles, the triangles of the other shapes shaded by their normal, back to
front (painter's algorithm), with the back faces of closed shapes left out
(fixed sphere bodies in grey, the others in sand).
--crop keeps the spheres whose centres lie in the box and clips the
triangles to it. Large triangles (the ground) are split until their edges
are shorter than --max-edge (default: a twentieth of the picture's extent;
0: never) so that they sort correctly against the grains on them.
--static-opacity below 1 draws the fixed geometry translucent (a bin's
walls over the grains inside). Without --crop, planes are clipped to the box
of everything else, enlarged by 15 % of its diagonal.
"""
import argparse
import base64
import math
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

TYPES = {"Float64": "d", "Float32": "f", "Int64": "q", "Int32": "i", "UInt64": "Q", "UInt32": "I",
         "Int8": "b", "UInt8": "B", "Int16": "h", "UInt16": "H"}
CLOSED = (1, 2, 3, 4)  # sphere, box, capsule, cylinder: back faces are hidden


def decode_array(a, header, compressed):
    """The values of a DataArray as a flat list."""
    code = TYPES[a.get("type")]
    text = (a.text or "").strip()
    if a.get("format", "ascii") == "ascii":
        conv = float if code in "fd" else int
        return [conv(x) for x in text.split()]
    hs = 8 if header == "UInt64" else 4
    hc = "<Q" if hs == 8 else "<I"
    if not compressed:
        raw = base64.b64decode(text)
        n = struct.unpack(hc, raw[:hs])[0]
        data = raw[hs:hs + n]
    else:
        first = base64.b64decode(text[:(3 * hs + 2) // 3 * 4])
        blocks = struct.unpack(hc, first[:hs])[0]
        hlen = ((3 + blocks) * hs + 2) // 3 * 4
        head = base64.b64decode(text[:hlen])
        sizes = struct.unpack("<%d%s" % (blocks, hc[1]), head[3 * hs:(3 + blocks) * hs])
        z = base64.b64decode(text[hlen:])
        parts, at = [], 0
        for s in sizes:
            parts.append(zlib.decompress(z[at:at + s]))
            at += s
        data = b"".join(parts)
    w = struct.calcsize(code)
    return list(struct.unpack("<%d%s" % (len(data) // w, code), data[:len(data) // w * w]))


def read_vtp(path):
    """(number of points, points as (x, y, z) tuples, point data, cell data, triangles)."""
    root = ET.parse(path).getroot()
    header = root.get("header_type", "UInt32")
    compressed = root.get("compressor") is not None
    piece = root.find("PolyData/Piece")

    def section(name):
        el = piece.find(name)
        if el is None:
            return {}
        return {a.get("Name"): decode_array(a, header, compressed) for a in el.findall("DataArray")}

    p = section("Points").get("Points", [])
    points = [tuple(p[i:i + 3]) for i in range(0, len(p), 3)]
    polys = section("Polys")
    tris = []
    if polys:
        con, off, start = polys["connectivity"], polys["offsets"], 0
        for end in off:
            tris.append(tuple(con[start:end]))
            start = end
    return points, section("PointData"), section("CellData"), tris


def frame_path(vtk_dir, kind, frame):
    return os.path.join(vtk_dir, "frames", "%s_%06d.vtp" % (kind, frame))


def read_frame(vtk_dir, kind, frame):
    """read_vtp of a frame's file, or of a run over MPI ranks the frame's
    pieces (KIND_NNNNNN_pRRRR.vtp, one per rank) joined."""
    path = frame_path(vtk_dir, kind, frame)
    if os.path.exists(path):
        return read_vtp(path)
    stem = "%s_%06d_p" % (kind, frame)
    frames = os.path.join(vtk_dir, "frames")
    pieces = sorted(f for f in os.listdir(frames) if f.startswith(stem) and f.endswith(".vtp"))
    if not pieces:
        return read_vtp(path)  # (its error: no such file)
    points, pd, cd, tris = [], {}, {}, []
    for f in pieces:
        p, d, c, t = read_vtp(os.path.join(frames, f))
        base = len(points)
        points += p
        for into, part in ((pd, d), (cd, c)):
            for name, values in part.items():
                into.setdefault(name, []).extend(values)
        tris += [tuple(base + i for i in tri) for tri in t]
    return points, pd, cd, tris


def last_frame(vtk_dir):
    nums = [int(m.group(1)) for m in (re.match(r"bodies_(\d+)(_p\d+)?\.vtp$", f) for f in os.listdir(
        os.path.join(vtk_dir, "frames"))) if m]
    if not nums:
        sys.exit("render_frame: no frames in %s/frames" % vtk_dir)
    return max(nums)


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def clip(poly, crop):
    """Sutherland-Hodgman: the polygon's part inside the box crop = (x0, x1, y0, y1, z0, z1)."""
    for axis in range(3):
        for lim, sign in ((crop[2 * axis], 1), (crop[2 * axis + 1], -1)):
            out = []
            for i, a in enumerate(poly):
                b = poly[(i + 1) % len(poly)]
                da, db = sign * (a[axis] - lim), sign * (b[axis] - lim)
                if da >= 0:
                    out.append(a)
                if (da >= 0) != (db >= 0):
                    t = da / (da - db)
                    out.append(tuple(a[k] + t * (b[k] - a[k]) for k in range(3)))
            poly = out
            if not poly:
                return poly
    return poly


def split(tri, max_edge, out):
    """Splits a triangle into four until its edges are shorter than max_edge."""
    a, b, c = tri
    longest = max(dot(sub(a, b), sub(a, b)), dot(sub(b, c), sub(b, c)), dot(sub(c, a), sub(c, a)))
    if max_edge <= 0 or longest <= max_edge * max_edge or len(out) > 200000:
        out.append(tri)
        return
    ab, bc, ca = [tuple(0.5 * (p[k] + q[k]) for k in range(3)) for p, q in ((a, b), (b, c), (c, a))]
    for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca)):
        split(t, max_edge, out)


def colour(rgb, shade):
    return "#%02x%02x%02x" % tuple(max(0, min(255, int(round(c * shade)))) for c in rgb)


def render(vtk_dir, frame, view=(-60.0, 25.0), crop=None, width=1000, max_edge=None, title=None, static_opacity=1.0):
    az, el = math.radians(view[0]), math.radians(view[1])
    d = (math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el))  # towards the viewer
    right = (-math.sin(az), math.cos(az), 0.0)
    up = cross(d, right)
    light = d
    for k, w in ((up, 0.7), (right, -0.4)):
        light = tuple(light[i] + w * k[i] for i in range(3))
    ln = math.sqrt(dot(light, light))
    light = tuple(x / ln for x in light)

    pts, pd, _, _ = read_frame(vtk_dir, "bodies", frame)
    fixed = [t == 1 for t in pd.get("body_type", [0] * len(pts))]
    spheres = [(p, r, f) for p, r, f in zip(pts, pd.get("glyph_radius", [0.0] * len(pts)), fixed) if r > 0]
    if crop:
        spheres = [s for s in spheres if all(crop[2 * k] <= s[0][k] <= crop[2 * k + 1] for k in range(3))]
    surfaces = []  # (triangle points, shape type, colour)
    for path, rgb, opacity in ((os.path.join(vtk_dir, "static.vtp"), (178, 170, 156), static_opacity),
                               ("shapes", (112, 134, 168), 1.0)):
        if path == "shapes":
            spts, _, cd, tris = read_frame(vtk_dir, "shapes", frame)
        elif not os.path.exists(path):
            continue
        else:
            spts, _, cd, tris = read_vtp(path)
        types = cd.get("shape_type", [0] * len(tris))
        for t, st in zip(tris, types):
            surfaces.append(([spts[i] for i in t], st, (rgb, opacity)))

    # without --crop, planes (drawn by the writer as squares larger than the
    # scene) are clipped to the box of everything else, enlarged by 15 % of its diagonal
    plane_box = crop
    if not crop and any(st == 5 for _, st, _ in surfaces):
        near = [s[0] for s in spheres] + [q for poly, st, _ in surfaces if st != 5 for q in poly]
        if near:
            lo = [min(q[k] for q in near) for k in range(3)]
            hi = [max(q[k] for q in near) for k in range(3)]
            m = 0.15 * math.sqrt(sum((hi[k] - lo[k]) ** 2 for k in range(3))) + max([s[1] for s in spheres] + [0])
            plane_box = tuple(v for k in range(3) for v in (lo[k] - m, hi[k] + m))

    # clip, cull, split
    polys = []
    for poly, st, rgb in surfaces:
        n = cross(sub(poly[1], poly[0]), sub(poly[2], poly[0]))
        nn = math.sqrt(dot(n, n))
        if nn == 0:
            continue
        n = tuple(x / nn for x in n)
        facing = dot(n, d)
        if st in CLOSED and facing <= 0:
            continue
        box = plane_box if st == 5 else crop
        if box:
            poly = clip(poly, box)
            if len(poly) < 3:
                continue
        polys.append((poly, n if facing >= 0 else tuple(-x for x in n), rgb))
    if max_edge is None:
        lo = [min([s[0][k] for s in spheres] + [q[k] for poly, _, _ in polys for q in poly] + [0]) for k in range(3)]
        hi = [max([s[0][k] for s in spheres] + [q[k] for poly, _, _ in polys for q in poly] + [0]) for k in range(3)]
        max_edge = math.sqrt(sum((hi[k] - lo[k]) ** 2 for k in range(3))) / 20
    items = []  # (depth, kind, data)
    for poly, n, rgb in polys:
        shade = 0.45 + 0.55 * max(0.0, dot(n, light))
        fill = (colour(rgb[0], shade), rgb[1])
        pieces = []
        if max_edge > 0:
            for i in range(1, len(poly) - 1):
                split((poly[0], poly[i], poly[i + 1]), max_edge, pieces)
        else:
            pieces = [poly]
        for piece in pieces:
            c = tuple(sum(q[k] for q in piece) / len(piece) for k in range(3))
            items.append((dot(c, d), 1, (piece, fill)))
    for p, r, f in spheres:
        items.append((dot(p, d), 0, (p, r, f)))
    items.sort(key=lambda it: (it[0], it[1]))

    def proj(p):
        return dot(p, right), -dot(p, up)

    xs, ys = [], []
    for _, kind, data in items:
        if kind == 0:
            x, y = proj(data[0])
            xs += [x - data[1], x + data[1]]
            ys += [y - data[1], y + data[1]]
        else:
            for q in data[0]:
                x, y = proj(q)
                xs.append(x)
                ys.append(y)
    if not xs:
        xs, ys = [0, 1], [0, 1]
    margin, top = 10, 30 if title else 10
    scale = (width - 2 * margin) / max(max(xs) - min(xs), 1e-9)
    height = int(math.ceil((max(ys) - min(ys)) * scale)) + margin + top
    x0, y0 = min(xs), min(ys)

    def px(p):
        x, y = proj(p)
        return "%.1f,%.1f" % ((x - x0) * scale + margin, (y - y0) * scale + top)

    nsph = sum(1 for it in items if it[1] == 0)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'data-frame="%d" data-spheres="%d" data-polygons="%d">' % (width, height, width, height, frame, nsph,
                                                                      len(items) - nsph),
           '<defs><radialGradient id="grain" cx="0.38" cy="0.35" r="0.7">'
           '<stop offset="0" stop-color="#f3dfb4"/><stop offset="0.6" stop-color="#c9a263"/>'
           '<stop offset="1" stop-color="#8a6a36"/></radialGradient>'
           '<radialGradient id="fixed" cx="0.38" cy="0.35" r="0.7">'
           '<stop offset="0" stop-color="#e8e4dc"/><stop offset="0.6" stop-color="#b2aa9c"/>'
           '<stop offset="1" stop-color="#6e685e"/></radialGradient></defs>',
           '<rect width="100%" height="100%" fill="#ffffff"/>']
    if title:
        out.append('<text x="%d" y="20" font-family="sans-serif" font-size="14">%s</text>' % (
            margin, title.replace("&", "&amp;").replace("<", "&lt;")))
    out.append('<g stroke-linejoin="round">')
    for _, kind, data in items:
        if kind == 0:
            p, r, f = data
            c = px(p).split(",")
            out.append('<circle cx="%s" cy="%s" r="%.1f" fill="url(#%s)"/>' % (c[0], c[1], max(r * scale, 0.3),
                                                                            "fixed" if f else "grain"))
        else:
            poly, (fill, opacity) = data
            if opacity >= 1:
                out.append('<polygon points="%s" fill="%s" stroke="%s" stroke-width="0.4"/>' % (
                    " ".join(px(q) for q in poly), fill, fill))
            else:
                out.append('<polygon points="%s" fill="%s" fill-opacity="%.2f"/>' % (
                    " ".join(px(q) for q in poly), fill, opacity))
    out.append("</g>\n</svg>\n")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vtk_dir", help="a run's vtk/ directory (or the run directory)")
    ap.add_argument("--frame", default="last", help="frame number, or 'last' (default)")
    ap.add_argument("--out", required=True, help="SVG file to write")
    ap.add_argument("--view", default="-60,25", help="azimuth,elevation in degrees (default -60,25)")
    ap.add_argument("--crop", help="xmin,xmax,ymin,ymax,zmin,zmax: draw only what lies in this box")
    ap.add_argument("--width", type=int, default=1000, help="picture width in px (default 1000)")
    ap.add_argument("--max-edge", type=float, default=None, help="split triangles longer than this (m; 0: never)")
    ap.add_argument("--title", help="a caption at the top")
    ap.add_argument("--static-opacity", type=float, default=1.0,
                    help="opacity of the fixed geometry, to see into a bin (default 1)")
    a = ap.parse_args()
    vtk_dir = a.vtk_dir
    if not os.path.exists(os.path.join(vtk_dir, "bodies.pvd")) and os.path.isdir(os.path.join(vtk_dir, "vtk")):
        vtk_dir = os.path.join(vtk_dir, "vtk")
    frame = last_frame(vtk_dir) if a.frame == "last" else int(a.frame)
    view = tuple(float(x) for x in a.view.split(","))
    crop = tuple(float(x) for x in a.crop.split(",")) if a.crop else None
    if len(view) != 2 or (crop and len(crop) != 6):
        sys.exit("render_frame: --view takes 2 numbers, --crop 6")
    svg = render(vtk_dir, frame, view, crop, a.width, a.max_edge, a.title, a.static_opacity)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(svg)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
