/* rover_scene — writes the rocker-bogie rover of the reference JSON
 * (../shared/reference/rover/rocker_bogie_rover.json) as two scene files,
 * one per variant, for the static wheel-load case: the rover at rest on flat
 * ground.
 *
 * usage: rover_scene [REFERENCE_JSON [OUTPUT_DIR]]
 * writes OUTPUT_DIR/rover_statics_scarecrow.json and
 *        OUTPUT_DIR/rover_statics_fullrover.json
 * (defaults: the reference next to the source tree, and the current
 * directory), then loads each file back with dvi_scene_load and builds it
 * with dvi_model_create as a check. The committed copies are in
 * examples/scenes/.
 *
 * The model is that of rover_model.c (see rover_model.h):
 *   - 18 bodies, each at its centre of mass with the JSON's inertia tensor
 *     about it (chassis axes); the chassis frame is lifted so that the
 *     lowest wheel points of the as-built pose touch the ground z = 0;
 *   - only the wheels collide: a cylinder per wheel (radius and width from
 *     the JSON), its axis on the wheel's spin axis; wheel material: the JSON's
 *     friction and restitution, and a contact compliance of 1e-8 m/N, which
 *     makes the split of each wheel's load between its two rim contact
 *     points unique (with rigid contact it is statically indeterminate; see
 *     tests/test_rover_statics.c); the ground has the same friction;
 *   - joints as listed in the JSON (the differential links keep the source
 *     model's revolutes); steering joints fixed; the drive joints are free
 *     revolutes (no motor: the rover stands still), carrier as body_a and
 *     wheel as body_b;
 *   - Lemke's method on the CCP (exact on this small problem and cheap: the
 *     rover's CCP is badly conditioned for the iterative solvers, which need
 *     ~10^4 iterations per step, see examples/rover_statics.c).
 * Probes: the six wheels' normal loads ("up" component of their contact
 * force), their full contact forces, the chassis position, the solver.
 */
#include <dvi/scene.h>

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ROVER_JSON
#define ROVER_JSON "../shared/reference/rover/rocker_bogie_rover.json"
#endif

static const char* const PARTS[17] = {"rocker_L",    "rocker_R",   "bogie_L",    "bogie_R",    "diff_bar",
                                      "diff_link_L", "diff_link_R", "upright_FL", "upright_FR", "upright_RL",
                                      "upright_RR",  "wheel_LF",   "wheel_LM",   "wheel_LB",   "wheel_RF",
                                      "wheel_RM",    "wheel_RB"};
static const char* const WHEELS[6] = {"wheel_LF", "wheel_LM", "wheel_LB", "wheel_RF", "wheel_RM", "wheel_RB"};

/* Shortest decimal that reads back as the same double. */
static void num(FILE* f, double x)
{
    char b[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, x);
        if (strtod(b, NULL) == x) break;
    }
    if (strcmp(b, "-0") == 0) strcpy(b, "0");
    fputs(b, f);
}

static void vec(FILE* f, const double* v, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++) {
        if (k) fputs(", ", f);
        num(f, v[k]);
    }
    fputc(']', f);
}

static const cJSON* need(const cJSON* o, const char* key, const char* where)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) fprintf(stderr, "rover_scene: %s.%s: missing\n", where, key);
    return v;
}

static int read_vec(const cJSON* v, double* out, int n, const char* where)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) {
        fprintf(stderr, "rover_scene: %s: expected %d numbers\n", where, n);
        return -1;
    }
    int i = 0;
    for (const cJSON* it = v->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it)) {
            fprintf(stderr, "rover_scene: %s[%d]: not a number\n", where, i);
            return -1;
        }
        out[i] = it->valuedouble;
    }
    return 0;
}

static int read_number(const cJSON* o, const char* key, double* out, const char* where)
{
    const cJSON* v = need(o, key, where);
    if (!v) return -1;
    if (!cJSON_IsNumber(v)) {
        fprintf(stderr, "rover_scene: %s.%s: not a number\n", where, key);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

/* Unit quaternion turning (0, 0, 1) onto the unit vector a. */
static void quat_z_to(const double a[3], double q[4])
{
    if (a[2] < -1.0 + 1e-12) {
        q[0] = 0.0, q[1] = 1.0, q[2] = q[3] = 0.0;
        return;
    }
    q[0] = 1.0 + a[2];
    q[1] = -a[1];
    q[2] = a[0];
    q[3] = 0.0;
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

static int write_variant(const cJSON* root, const char* variant, const char* path)
{
    const cJSON* chassis = need(root, "chassis", "");
    const cJSON* cv = chassis ? need(chassis, variant, "chassis") : NULL;
    const cJSON* parts = need(root, "parts", "");
    const cJSON* wheels = need(root, "wheels", "");
    const cJSON* joints = need(root, "joints", "");
    const cJSON* mat = wheels ? need(wheels, "material_nsc", "wheels") : NULL;
    if (!cv || !parts || !wheels || !joints || !mat) return -1;
    double cmass, cdiag[3], ccom[3], radius, width, envelope, friction, restitution;
    if (read_number(cv, "mass", &cmass, "chassis") || read_vec(need(cv, "inertia_diag", "chassis"), cdiag, 3, "inertia_diag") ||
        read_vec(need(chassis, "com", "chassis"), ccom, 3, "chassis.com") ||
        read_number(wheels, "radius", &radius, "wheels") || read_number(wheels, "width", &width, "wheels") ||
        read_number(wheels, "collision_envelope_nsc", &envelope, "wheels") ||
        read_number(mat, "friction", &friction, "wheels.material_nsc") ||
        read_number(mat, "restitution", &restitution, "wheels.material_nsc"))
        return -1;

    /* lift: the lowest wheel point of the as-built pose on z = 0 */
    double bottom = INFINITY;
    for (int w = 0; w < 6; w++) {
        const cJSON* p = need(parts, WHEELS[w], "parts");
        double o[3], a[3];
        if (!p || read_vec(need(p, "frame_origin", WHEELS[w]), o, 3, "frame_origin") ||
            read_vec(need(p, "spin_axis", WHEELS[w]), a, 3, "spin_axis"))
            return -1;
        double an = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        double az = a[2] / an, hz = sqrt(fmax(0.0, 1.0 - az * az));
        double b = o[2] - radius * hz - 0.5 * width * fabs(az);
        if (b < bottom) bottom = b;
    }
    const double lift = -bottom;

    FILE* f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    char lower[32];
    size_t n = strlen(variant);
    for (size_t k = 0; k <= n && k < sizeof lower; k++)
        lower[k] = (char)(variant[k] >= 'A' && variant[k] <= 'Z' ? variant[k] + 32 : variant[k]);
    fprintf(f, "{\n  \"name\": \"rover_statics_%s\",\n", lower);
    fprintf(f, "  \"description\": \"The rocker-bogie rover (%s variant) at rest on flat ground; the six wheel "
               "loads settle to the static loads of the reference (written by examples/rover_scene.c from "
               "shared/reference/rover/rocker_bogie_rover.json).\",\n", variant);
    fprintf(f, "  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n");
    fprintf(f, "  \"materials\": {\n    \"ground\": {\"friction\": ");
    num(f, friction);
    fprintf(f, "},\n    \"wheel\": {\"friction\": ");
    num(f, friction);
    fprintf(f, ", \"restitution\": ");
    num(f, restitution);
    fprintf(f, ", \"compliance\": 1e-8, \"comment\": \"a stiff contact (2-8 um at the rover's loads) makes "
               "each wheel's load split between its two rim points unique\"}\n  },\n");

    /* bodies */
    fprintf(f, "  \"bodies\": [\n");
    fprintf(f, "    {\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"material\": "
               "\"ground\"}]},\n");
    double pos[3] = {ccom[0], ccom[1], ccom[2] + lift};
    fprintf(f, "    {\"name\": \"chassis\", \"mass\": ");
    num(f, cmass);
    fprintf(f, ", \"inertia\": ");
    vec(f, cdiag, 3);
    fprintf(f, ", \"position\": ");
    vec(f, pos, 3);
    fprintf(f, "}");
    for (int i = 0; i < 17; i++) {
        const cJSON* p = need(parts, PARTS[i], "parts");
        double mass, com[3], J[9];
        if (!p || read_number(p, "mass", &mass, PARTS[i]) || read_vec(need(p, "com", PARTS[i]), com, 3, "com")) {
            fclose(f);
            return -1;
        }
        const cJSON* jj = need(p, "inertia_about_com", PARTS[i]);
        if (!cJSON_IsArray(jj) || cJSON_GetArraySize(jj) != 3) {
            fprintf(stderr, "rover_scene: %s.inertia_about_com: expected 3 rows\n", PARTS[i]);
            fclose(f);
            return -1;
        }
        int r = 0;
        for (const cJSON* row = jj->child; row; row = row->next, r++)
            if (read_vec(row, J + 3 * r, 3, "inertia_about_com")) {
                fclose(f);
                return -1;
            }
        double x[3] = {com[0], com[1], com[2] + lift};
        fprintf(f, ",\n    {\"name\": \"%s\", \"mass\": ", PARTS[i]);
        num(f, mass);
        fprintf(f, ",\n     \"inertia\": [");
        for (int k = 0; k < 3; k++) {
            if (k) fputs(", ", f);
            vec(f, J + 3 * k, 3);
        }
        fprintf(f, "],\n     \"position\": ");
        vec(f, x, 3);
        if (strncmp(PARTS[i], "wheel_", 6) == 0) {
            double o[3], a[3], q[4], off[3];
            read_vec(need(p, "frame_origin", PARTS[i]), o, 3, "frame_origin");
            read_vec(need(p, "spin_axis", PARTS[i]), a, 3, "spin_axis");
            double an = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
            for (int k = 0; k < 3; k++) {
                a[k] /= an;
                off[k] = o[k] - com[k];
            }
            quat_z_to(a, q);
            fprintf(f, ",\n     \"shapes\": [{\"type\": \"cylinder\", \"radius\": ");
            num(f, radius);
            fprintf(f, ", \"half_length\": ");
            num(f, 0.5 * width);
            fprintf(f, ", \"position\": ");
            vec(f, off, 3);
            fprintf(f, ", \"orientation\": ");
            vec(f, q, 4);
            fprintf(f, ", \"material\": \"wheel\"}]");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n");

    /* joints */
    fprintf(f, "  \"joints\": [\n");
    int j = 0;
    for (const cJSON* it = joints->child; it; it = it->next, j++) {
        const cJSON* jn = need(it, "name", "joints");
        const cJSON* jt = need(it, "type", "joints");
        const cJSON* ja = need(it, "body_a", "joints");
        const cJSON* jb = need(it, "body_b", "joints");
        double p[3], ax[3];
        if (!cJSON_IsString(jn) || !cJSON_IsString(jt) || !cJSON_IsString(ja) || !cJSON_IsString(jb) ||
            read_vec(need(it, "position", "joints"), p, 3, "position") ||
            read_vec(need(it, "axis", "joints"), ax, 3, "axis")) {
            fclose(f);
            return -1;
        }
        const char* type = jt->valuestring;
        const char *a = ja->valuestring, *b = jb->valuestring;
        bool drive = strncmp(type, "rotational speed motor", 22) == 0;
        const char* kind = strncmp(type, "revolute", 8) == 0 || drive ? "revolute"
                           : strncmp(type, "fixed", 5) == 0          ? "fixed"
                           : strncmp(type, "spherical", 9) == 0      ? "spherical"
                                                                     : NULL;
        if (!kind) {
            fprintf(stderr, "rover_scene: joints[%d].type: unknown \"%s\"\n", j, type);
            fclose(f);
            return -1;
        }
        if (drive && strncmp(a, "wheel_", 6) == 0) { /* carrier = body_a, wheel = body_b */
            const char* t = a;
            a = b;
            b = t;
        }
        double anchor[3] = {p[0], p[1], p[2] + lift};
        fprintf(f, "%s    {\"name\": \"%s\", \"type\": \"%s\", \"body_a\": \"%s\", \"body_b\": \"%s\", \"anchor\": ",
                j ? ",\n" : "", jn->valuestring, kind, a, b);
        vec(f, anchor, 3);
        if (strcmp(kind, "revolute") == 0) {
            fprintf(f, ", \"axis\": ");
            vec(f, ax, 3);
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n");

    fprintf(f, "  \"formulation\": {\n    \"method\": \"dvi\",\n    \"dt\": 0.002,\n    \"solver\": \"lemke\",\n"
               "    \"collision_envelope\": ");
    num(f, envelope);
    fprintf(f, "\n  },\n  \"duration\": 1.0,\n");
    fprintf(f, "  \"probes\": [\n");
    fprintf(f, "    {\"name\": \"wheel_loads\", \"what\": \"contact_force\", \"component\": \"up\", \"every\": 5,\n"
               "     \"bodies\": [\"wheel_LF\", \"wheel_LM\", \"wheel_LB\", \"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n");
    fprintf(f, "    {\"name\": \"wheel_forces\", \"what\": \"contact_force\", \"every\": 25,\n"
               "     \"bodies\": [\"wheel_LF\", \"wheel_LM\", \"wheel_LB\", \"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n");
    fprintf(f, "    {\"name\": \"chassis\", \"what\": \"position\", \"body\": \"chassis\", \"every\": 25},\n");
    fprintf(f, "    {\"name\": \"solver\", \"what\": \"solver\", \"every\": 5}\n  ]\n}\n");
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

/* Loads the written scene back and builds it. */
static int check(const char* path)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    if (dvi_scene_load(path, &s, &e) != DVI_OK) {
        fprintf(stderr, "rover_scene: %s does not load:\n%s", path, e.text ? e.text : "");
        dvi_scene_errors_free(&e);
        return -1;
    }
    dvi_model* m = NULL;
    char msg[256];
    dvi_status st = dvi_model_create(s, &m, msg, sizeof msg);
    if (st != DVI_OK) fprintf(stderr, "rover_scene: %s does not build: %s\n", path, msg);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return st == DVI_OK ? 0 : -1;
}

int main(int argc, char** argv)
{
    const char* json = argc > 1 ? argv[1] : ROVER_JSON;
    const char* dir = argc > 2 ? argv[2] : ".";
    if (argc > 3 || (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        fprintf(stderr, "usage: rover_scene [REFERENCE_JSON [OUTPUT_DIR]]\n");
        return 2;
    }
    FILE* f = fopen(json, "rb");
    if (!f) {
        perror(json);
        return 1;
    }
    static char buf[1 << 18];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON* root = cJSON_Parse(buf);
    if (!root) {
        fprintf(stderr, "rover_scene: %s: malformed JSON\n", json);
        return 1;
    }
    static const char* const VARIANTS[2] = {"Scarecrow", "FullRover"};
    static const char* const FILES[2] = {"rover_statics_scarecrow.json", "rover_statics_fullrover.json"};
    int rc = 0;
    for (int v = 0; v < 2; v++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, FILES[v]);
        if (write_variant(root, VARIANTS[v], path) != 0 || check(path) != 0) {
            rc = 1;
            continue;
        }
        printf("wrote %s\n", path);
    }
    cJSON_Delete(root);
    return rc;
}
