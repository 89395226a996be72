"""Opens the VTK frames of a `dvi run` in ParaView, in one step.

    pvpython tools/paraview_load.py out/NAME/vtk          # a window, the first frame
    paraview --script=tools/paraview_load.py              # then load("out/NAME/vtk")

or, in ParaView's Python shell (View > Python Shell > Run Script), run this
file and call load("out/NAME/vtk").

It shows the sphere bodies as spheres of their radius (a Glyph scaled by
glyph_radius), the other shapes of the moving bodies (shapes.pvd), and the
fixed geometry (static.vtp) in grey, colours the bodies by speed, sets the
animation to the frames' simulated times and resets the camera. The files
and arrays are described in docs/outputs.md.
"""
import os
import sys

from paraview.simple import (GetActiveViewOrCreate, GetAnimationScene, ColorBy, Glyph, PVDReader, Render,
                             Show, XMLPolyDataReader)


def load(vtk_dir):
    view = GetActiveViewOrCreate("RenderView")

    bodies = PVDReader(registrationName="bodies", FileName=os.path.join(vtk_dir, "bodies.pvd"))
    spheres = Glyph(registrationName="spheres", Input=bodies, GlyphType="Sphere")
    spheres.ScaleArray = ["POINTS", "glyph_radius"]
    spheres.ScaleFactor = 2.0  # the glyph source's radius is 0.5
    spheres.OrientationArray = ["POINTS", "No orientation array"]
    spheres.GlyphMode = "All Points"
    spheres.GlyphType.ThetaResolution = 16
    spheres.GlyphType.PhiResolution = 12
    shown = Show(spheres, view)
    ColorBy(shown, ("POINTS", "speed"))
    shown.SetScalarBarVisibility(view, True)

    shapes_pvd = os.path.join(vtk_dir, "shapes.pvd")
    if os.path.exists(shapes_pvd):
        shapes = PVDReader(registrationName="shapes", FileName=shapes_pvd)
        ColorBy(Show(shapes, view), ("CELLS", "speed"))

    static_vtp = os.path.join(vtk_dir, "static.vtp")
    if os.path.exists(static_vtp):
        fixed = XMLPolyDataReader(registrationName="static", FileName=[static_vtp])
        shown = Show(fixed, view)
        ColorBy(shown, None)
        shown.AmbientColor = shown.DiffuseColor = [0.72, 0.72, 0.72]

    GetAnimationScene().UpdateAnimationUsingDataTimeSteps()
    view.ResetCamera()
    Render(view)
    return view


if __name__ == "__main__" and len(sys.argv) > 1:
    load(sys.argv[1])
    try:  # pvpython: keep the window open
        from paraview.simple import Interact
        Interact()
    except ImportError:
        pass
