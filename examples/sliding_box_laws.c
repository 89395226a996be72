/* The sliding box under the two friction laws (docs/formulation.md, "Two
 * friction laws"): examples/scenes/sliding_box.json (the CCP, apgd) and
 * sliding_box_coulomb.json (Coulomb's law, Lemke's Coulomb LCP), a 1 kg
 * cube launched at 2 m/s on flat ground with μ = 0.4, h = 1 ms. Draws the
 * box's height above its start and its speed against time, both laws in
 * each panel, into an SVG picture (docs/figures/sliding_box_laws.svg).
 *
 *   sliding_box_laws [CCP_SCENE COULOMB_SCENE [OUT.svg]]
 *
 * Checks the answers and exits 1 on a mismatch: under Coulomb's law the box
 * never rises (< 1e-6 m) and slows at μ g exactly, v(t) = v0 − μ g t, until
 * it stops at t = v0/(μ g) = 0.5097 s; under the CCP it hops (24.5 mm) and
 * flies without friction, and both stop at the same place (0.50868 m). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/output.h"
#include "dvi/scene.h"
#include "dvi/world.h"

#define STEPS 650 /* 0.65 s at 1 ms: past the stop at 0.5097 s */

typedef struct trace {
    double t[STEPS + 1], height_mm[STEPS + 1], speed[STEPS + 1];
    double hop, x_end;
} trace;

static int run(const char* path, trace* out)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    if (dvi_scene_load(path, &s, &e) != DVI_OK) {
        fprintf(stderr, "%s: %s", path, e.text ? e.text : "cannot load\n");
        dvi_scene_errors_free(&e);
        return -1;
    }
    char msg[256];
    dvi_model* m = NULL;
    dvi_body_id box;
    if (dvi_model_create(s, &m, msg, sizeof msg) != DVI_OK || dvi_model_find_body(m, "box", &box) != DVI_OK) {
        fprintf(stderr, "%s: %s\n", path, m ? "no body \"box\"" : msg);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
        return -1;
    }
    dvi_world* w = dvi_model_world(m);
    double x0[3], x[3], v[3];
    dvi_body_get_position(w, box, x0);
    out->hop = 0.0;
    for (int k = 0; k <= STEPS; k++) {
        if (k > 0 && dvi_model_step(m) < 0) {
            fprintf(stderr, "%s: step %d: %s\n", path, k, dvi_error_message());
            dvi_model_destroy(m);
            dvi_scene_destroy(s);
            return -1;
        }
        dvi_body_get_position(w, box, x);
        dvi_body_get_velocity(w, box, v);
        out->t[k] = dvi_model_time(m);
        out->height_mm[k] = 1e3 * (x[2] - x0[2]);
        out->speed[k] = hypot(v[0], v[1]);
        out->hop = fmax(out->hop, x[2] - x0[2]);
    }
    out->x_end = x[0] - x0[0];
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return 0;
}

int main(int argc, char** argv)
{
    const char* scenes[2] = {"examples/scenes/sliding_box.json", "examples/scenes/sliding_box_coulomb.json"};
    const char* svg = "sliding_box_laws.svg";
    if (argc == 3 || argc == 4) {
        scenes[0] = argv[1];
        scenes[1] = argv[2];
        if (argc == 4) svg = argv[3];
    } else if (argc != 1) {
        fprintf(stderr, "usage: sliding_box_laws [CCP_SCENE COULOMB_SCENE [OUT.svg]]\n");
        return 2;
    }
    static trace tr[2];
    for (int l = 0; l < 2; l++)
        if (run(scenes[l], &tr[l]) != 0) return 1;

    /* Coulomb's law: v0 − μ g t until the stop, never off the ground */
    const double v0 = 2.0, mu = 0.4, g = 9.81, t_stop = v0 / (mu * g);
    double worst = 0.0;
    for (int k = 0; k <= STEPS; k++) {
        double expect = fmax(0.0, v0 - mu * g * tr[1].t[k]);
        if (tr[1].t[k] < t_stop - 1e-3) worst = fmax(worst, fabs(tr[1].speed[k] - expect));
    }
    printf("coulomb: hop %.3e m, largest |v - (v0 - mu g t)| %.3e m/s before the stop, slid %.5f m\n", tr[1].hop,
           worst, tr[1].x_end);
    printf("ccp:     hop %.5f m, speed at 0.1 s %.6f m/s (Coulomb's %.6f), slid %.5f m\n", tr[0].hop,
           tr[0].speed[100], tr[1].speed[100], tr[0].x_end);
    bool ok = tr[1].hop < 1e-6 && worst < 1e-6 && fabs(tr[0].hop - 0.0245) < 5e-4 &&
              fabs(tr[0].x_end - tr[1].x_end) < 1e-4 && fabs(tr[1].x_end - 0.50868) < 1e-4;

    /* every 20th step (20 ms) in the picture; Coulomb's points hollow, so that
     * the CCP's show through where the two runs coincide (after the landing) */
    enum { EVERY = 20, POINTS = STEPS / EVERY + 1 };
    static bool hollow[POINTS];
    static double pt[2][3][POINTS];
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < POINTS; i++) {
            pt[l][0][i] = tr[l].t[i * EVERY];
            pt[l][1][i] = tr[l].height_mm[i * EVERY];
            pt[l][2][i] = tr[l].speed[i * EVERY];
        }
    const char* names[2] = {"CCP (apgd)", "Coulomb (Lemke)"};
    dvi_svg_xy_series height[2], speed[2];
    for (int l = 0; l < 2; l++) {
        height[l] = (dvi_svg_xy_series){names[l], POINTS, pt[l][0], pt[l][1], l == 1 ? hollow : NULL, true};
        speed[l] = (dvi_svg_xy_series){names[l], POINTS, pt[l][0], pt[l][2], l == 1 ? hollow : NULL, true};
    }
    dvi_svg_xy_panel p[2] = {dvi_svg_xy_default_panel(), dvi_svg_xy_default_panel()};
    p[0].title = "height of the box above its start";
    p[0].x_label = "time [s]";
    p[0].y_label = "height [mm]";
    p[0].log_x = p[0].log_y = false;
    p[0].series_count = 2;
    p[0].series = height;
    p[1].title = "speed of the box";
    p[1].x_label = "time [s]";
    p[1].y_label = "speed [m/s]";
    p[1].log_x = p[1].log_y = false;
    p[1].series_count = 2;
    p[1].series = speed;
    p[1].legend_note = "Coulomb: v0 - mu g t";
    char msg[256];
    if (dvi_svg_xy_plot(svg, "A box launched at 2 m/s on flat ground, mu = 0.4, h = 1 ms: the CCP against Coulomb's law",
                        "Under the CCP the sliding contacts separate at mu |u_t|: the box hops and flies without "
                        "friction. Under Coulomb's law it stays on the ground and slows at mu g. From the CCP box's landing "
                        "(0.15 s) the two runs slide alike and stop at the same 0.50868 m.",
                        2, p, 2, msg, sizeof msg) != 0) {
        fprintf(stderr, "sliding_box_laws: %s\n", msg);
        return 1;
    }
    printf("wrote %s\n", svg);
    if (!ok) fprintf(stderr, "sliding_box_laws: the answers differ from the expected ones\n");
    return ok ? 0 : 1;
}
