/* `dvi check SCENE`: validate a scene file, build its model, and print what
 * it holds.
 *
 * Bodies and shapes are counted in the built world, generators come from
 * scene.h; scene.h has no count of joints or materials, so those are read
 * from the file itself (the lengths of its "joints" array and "materials"
 * object, in the JSON that has just been validated). */
#include "dvi_cli.h"

#include <dvi/dvi.h>

#include <cjson/cJSON.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int array_length(const cJSON* root, const char* key)
{
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(root, key);
    if (cJSON_IsArray(a)) return cJSON_GetArraySize(a);
    if (cJSON_IsObject(a)) return cJSON_GetArraySize(a); /* a map of named entries */
    return 0;
}

/* A DEM scene: the stable step of its first step's contacts
 * (dvi_world_dem_stable_step: the stiffest contact, at its overlap or an
 * impact at the characteristic speed, with the bodies' rocking and their
 * other contacts), against the scene's dt. Takes one step of the model. */
static void dem_step_line(const char* path, dvi_model* model, double dt)
{
    double hs = INFINITY;
    if (dvi_model_step(model) < 0) {
        printf("  dem step    the first step failed: %s\n", dvi_error_message());
        return;
    }
    if (dvi_world_dem_stable_step(dvi_model_world_const(model), &hs) != DVI_OK || !isfinite(hs)) {
        printf("  dem step    no contact at the first step to estimate the stable step from (dvi study finds it)\n");
        return;
    }
    if (dt <= hs) {
        printf("  dem step    stable below ~%.3g s (the stiffest contact of the first step); dt is %.2g of it\n", hs,
               dt / hs);
        return;
    }
    printf("  warning     dt = %.6g s is longer than the DEM stable step ~%.3g s of the first step's stiffest contact "
           "(its springs and the bodies' rocking, docs/dem.md#stable-step): use dt <= %.3g s, or softer materials\n",
           dt, hs, hs);
    fprintf(stderr, "%s: warning: dt = %.6g s is longer than the DEM stable step ~%.3g s\n", path, dt, hs);
}

/* The overrides of dvi run that decide which solver meets which law and
 * which blocks: dvi check takes them to check what that run would. */
enum { OPT_SOLVER = 1, OPT_METHOD, OPT_FRICTION, OPT_LEMKE_COULOMB };

static const cli_option check_options[] = {
    {"solver", true, OPT_SOLVER},
    {"method", true, OPT_METHOD},
    {"friction", true, OPT_FRICTION},
    {"lemke-coulomb", false, OPT_LEMKE_COULOMB},
    {NULL, false, 0},
};

int dvi_cmd_check(int argc, char** argv)
{
    cli_parser p;
    cli_init(&p, argc, argv, "check");
    const char* path = NULL;
    const char* arg;
    dvi_scene_overrides ov;
    memset(&ov, 0, sizeof ov);
    int id;
    while ((id = cli_next(&p, check_options, &arg)) != CLI_END) {
        if (id == CLI_ERROR) return DVI_EXIT_USAGE;
        if (id == CLI_HELP) {
            dvi_print_help("check");
            return DVI_EXIT_OK;
        }
        switch (id) { /* validated where dvi run's are: dvi_scene_apply_overrides */
        case OPT_SOLVER: ov.solver = arg; continue;
        case OPT_METHOD: ov.method = arg; continue;
        case OPT_FRICTION: ov.friction = arg; continue;
        case OPT_LEMKE_COULOMB: ov.lemke_coulomb = true; continue;
        default: break;
        }
        if (path) return cli_usage_error("check", "unexpected argument '%s' (one scene file only)", arg);
        path = arg;
    }
    if (!path) return cli_usage_error("check", "missing SCENE (a scene file)");

    dvi_scene* scene = NULL;
    int problems = 0;
    int rc = cli_load_scene(path, &ov, &scene, &problems);
    if (rc >= 0) {
        fprintf(stderr, "%s: invalid (%d error%s)\n", path, problems, problems == 1 ? "" : "s");
        return rc;
    }

    char msg[512] = "";
    dvi_model* model = NULL;
    dvi_status st = dvi_model_create(scene, &model, msg, sizeof msg);
    if (st < 0) {
        fprintf(stderr, "%s: cannot build the model: %s\n", path, msg[0] ? msg : dvi_status_string(st));
        dvi_scene_destroy(scene);
        return st == DVI_ERR_NOMEM ? DVI_EXIT_FAILED : DVI_EXIT_USAGE;
    }

    /* the file's own lists (it parsed as valid JSON a moment ago) */
    size_t n = 0;
    char* text = cli_read_file(path, &n, msg, sizeof msg);
    cJSON* root = text ? cJSON_ParseWithLength(text, n) : NULL;
    free(text);

    /* the study object (dvi study), checked as that command would */
    char study_line[1024] = "";
    int study_problems = root ? dvi_study_check_scene(path, root, scene, model, study_line, sizeof study_line) : 0;
    if (study_problems > 0) {
        fprintf(stderr, "%s: invalid (%d error%s)\n", path, study_problems, study_problems == 1 ? "" : "s");
        cJSON_Delete(root);
        dvi_model_destroy(model);
        dvi_scene_destroy(scene);
        return DVI_EXIT_USAGE;
    }

    const dvi_world* w = dvi_model_world_const(model);
    int32_t nb = dvi_world_body_count(w);
    int64_t types[3] = {0, 0, 0}, shapes = 0;
    for (int32_t i = 0; i < nb; i++) {
        dvi_body_id b;
        dvi_body_info info;
        if (dvi_world_body_at(w, i, &b) != DVI_OK || dvi_body_get_info(w, b, &info) != DVI_OK) continue;
        if ((int)info.type >= 0 && (int)info.type < 3) types[info.type]++;
        shapes += info.shape_count;
    }
    dvi_scene_settings s = dvi_scene_get_settings(scene);

    printf("%s: valid\n", path);
    printf("  name        %s\n", s.name && *s.name ? s.name : "(none)");
    printf("  bodies      %d (%" PRId64 " dynamic, %" PRId64 " fixed, %" PRId64 " kinematic)", (int)nb, types[0],
           types[1], types[2]);
    if (root) printf("; %d listed in the file", array_length(root, "bodies"));
    printf("\n");
    if ((int64_t)nb != dvi_scene_body_count(scene))
        printf("  warning     the scene announces %" PRId64 " bodies, the model has %d\n", dvi_scene_body_count(scene),
               (int)nb);
    printf("  shapes      %" PRId64 "\n", shapes);
    if (root) {
        printf("  joints      %d\n", array_length(root, "joints"));
        printf("  materials   %d\n", array_length(root, "materials"));
    }
    int32_t ng = dvi_scene_generator_count(scene);
    printf("  generators  %d\n", (int)ng);
    for (int32_t i = 0; i < ng; i++) {
        dvi_generator_info g;
        if (dvi_scene_get_generator(scene, i, &g) != DVI_OK) continue;
        printf("    %-20s %s, %" PRId64 " bodies (%" PRId64 " lattice sites), bodies %" PRId64 "..%" PRId64 "\n",
               g.name, g.type, g.count, g.sites, g.first_body, g.first_body + g.count - 1);
    }
    int32_t np = dvi_model_probe_count(model);
    printf("  probes      %d\n", (int)np);
    for (int32_t i = 0; i < np; i++) {
        dvi_probe_info info;
        if (dvi_model_probe_info(model, i, &info) != DVI_OK) continue;
        if (info.interval > 0)
            printf("    %-20s every %g s, %d columns:", info.name, info.interval, (int)info.columns);
        else
            printf("    %-20s every %d step%s, %d columns:", info.name, (int)info.every, info.every == 1 ? "" : "s",
                   (int)info.columns);
        for (int32_t c = 0; c < info.columns; c++) {
            const char* unit = info.units && info.units[c] ? info.units[c] : "";
            printf("%s %s%s%s%s", c ? "," : "", info.column_names[c], *unit ? " [" : "", unit, *unit ? "]" : "");
        }
        printf("\n");
    }
    int64_t steps = s.dt > 0 ? cli_steps_for(s.duration, s.dt) : 0;
    printf("  method      %s%s\n", s.method,
           strcmp(s.method, "dem") == 0 ? " (penalty contacts; the solver below only for joint problems of more than "
                                          "256 rows)"
                                        : "");
    printf("  friction    %s%s\n", dvi_friction_law_string(s.friction),
           strcmp(s.method, "dem") == 0       ? " (not used by the DEM step)"
           : s.friction == DVI_LAW_COULOMB ? " (Coulomb's law: sliding contacts keep u_n = 0)"
                                             : " (the cone complementarity problem)");
    char warm[48] = "";
    if (s.solver_settings.warm_start)
        snprintf(warm, sizeof warm, s.solver_settings.warm_start_scale != 1.0 ? ", warm start x %.3g" : ", warm start",
                 s.solver_settings.warm_start_scale);
    printf("  solver      %s (tolerance %.3g, at most %d iterations%s)\n", s.solver, s.solver_settings.tolerance,
           (int)s.solver_settings.max_iterations, warm);
    printf("  dt          %.6g s\n", s.dt);
    if (strcmp(s.method, "dem") == 0) dem_step_line(path, model, s.dt);
    printf("  duration    %.6g s (%" PRId64 " steps)\n", s.duration, steps);
    printf("  threads     %d%s\n", (int)s.threads, s.threads == 0 ? " (library default)" : "");
    if (study_line[0]) printf("  study       %s\n", study_line);
    cJSON_Delete(root);
    dvi_model_destroy(model);
    dvi_scene_destroy(scene);
    return DVI_EXIT_OK;
}
