/* The `dvi` command end to end: the executable ($DVI_BUILD_DIR/tool/dvi) is
 * run in a child process on small scenes written into a temporary
 * directory, and its exit status, messages and output files are checked.
 *
 *   - help and version; usage errors exit 2 with a message;
 *   - check: a good scene (exit 0, counts printed), a bad one (exit 2, one
 *     "SCENE: json.path: message" line per problem);
 *   - run: the files it writes, CSV row counts (one row at t = 0, then one
 *     every `every` steps), summary.json, VTK frames, the default out/NAME;
 *   - resume: 200 steps straight against 100 + --resume to 200: byte-identical
 *     CSVs and final state blobs; the same with periodic checkpoints;
 *   - interrupt: SIGINT to a running process -> exit 130, valid outputs,
 *     "interrupted": true; --resume then ends exactly where a straight run does;
 *   - crash: SIGKILL after periodic checkpoints; --resume cuts the CSVs back
 *     to the checkpoint and ends exactly where a straight run does;
 *   - DEM: --method dem runs the scene on penalty contacts, and a resumed
 *     DEM run ends byte-identical to a straight one;
 *   - solve: a CCP file solved by apgd, pgs and lemke (--all-solvers);
 *   - solvers: a scene with rolling friction under Coulomb's law: check and
 *     run refuse nsgs and newton with the same message, which names the
 *     shapes and a solver that then runs it (the ball stays on the plane);
 *     lemke with --lemke-coulomb;
 *   - help: every option of each command's parser table (tool/dvi_*.c) is in its
 *     help, every solver of the registry in the help texts and in the
 *     --solver rows of docs/cli.md.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dvi/dvi.h"
#include "test_util.h"

/* the executable under test, in the build tree (DVI_BUILD_DIR, set by meson test) */
#define DVI_EXE BUILD_PATH("tool/dvi")
static char g_root[512]; /* the temporary directory of this run */

/* ---- files ------------------------------------------------------------------------ */

static void path_in(char* out, size_t size, const char* a, const char* b)
{
    snprintf(out, size, "%s/%s", a, b);
}

static bool exists(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void assert_exists(const char* dir, const char* file)
{
    char p[1024];
    path_in(p, sizeof p, dir, file);
    if (!exists(p)) {
        print_error("missing output file %s\n", p);
        fail();
    }
}

/* Byte equality of two files (both must exist). */
static void assert_same_file(const char* a, const char* b)
{
    size_t na = 0, nb = 0;
    char* ta = test_read_text(a, &na);
    char* tb = test_read_text(b, &nb);
    if (!ta || !tb) {
        print_error("cannot read %s or %s\n", a, b);
        fail();
    }
    if (na != nb || memcmp(ta, tb, na) != 0) {
        size_t i = 0;
        while (i < na && i < nb && ta[i] == tb[i]) i++;
        print_error("%s (%zu bytes) and %s (%zu bytes) differ at byte %zu\n", a, na, b, nb, i);
        free(ta);
        free(tb);
        fail();
    }
    free(ta);
    free(tb);
}

/* Number of files in dir whose name starts with prefix. */
static int count_files(const char* dir, const char* prefix)
{
    DIR* d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    closedir(d);
    return n;
}

/* A CSV written by the tool: a header of `columns` titles (columns <= 0:
 * as many as the header has), then rows of `columns` numbers each, every
 * line ending in '\n'. Returns the number of data rows; fails the test on
 * anything malformed. last_row (may be NULL) receives the last row's
 * numbers. */
static long csv_rows(const char* path, int columns, double* last_row)
{
    size_t n = 0;
    char* t = test_read_text(path, &n);
    if (!t) {
        print_error("cannot read %s\n", path);
        fail();
    }
    assert_true(n > 0 && t[n - 1] == '\n');
    char* line = t;
    long rows = -1; /* the header is not a row */
    while (*line) {
        char* nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        if (rows >= 0) {
            char* p = line;
            for (int c = 0; c < columns; c++) {
                char* end = NULL;
                double v = strtod(p, &end);
                if (end == p) {
                    print_error("%s: row %ld, column %d: not a number: '%s'\n", path, rows + 1, c, p);
                    fail();
                }
                if (last_row) last_row[c] = v;
                p = end;
                if (c + 1 < columns) {
                    if (*p != ',') {
                        print_error("%s: row %ld: %d columns expected: '%s'\n", path, rows + 1, columns, line);
                        fail();
                    }
                    p++;
                }
            }
            if (*p != '\0') {
                print_error("%s: row %ld: trailing text '%s'\n", path, rows + 1, p);
                fail();
            }
        } else {
            int commas = 0;
            for (char* p = line; *p; p++) commas += *p == ',';
            if (columns <= 0) columns = commas + 1;
            if (commas != columns - 1) {
                print_error("%s: header '%s': %d columns expected\n", path, line, columns);
                fail();
            }
        }
        rows++;
        line = nl + 1;
    }
    free(t);
    return rows;
}

static cJSON* read_json(const char* path)
{
    char* t = test_read_text(path, NULL);
    if (!t) {
        print_error("cannot read %s\n", path);
        fail();
    }
    cJSON* j = cJSON_Parse(t);
    free(t);
    if (!j) {
        print_error("%s: not valid JSON\n", path);
        fail();
    }
    return j;
}

static double json_number(const cJSON* obj, const char* key)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v)) {
        print_error("JSON: '%s' is not a number\n", key);
        fail();
    }
    return v->valuedouble;
}

/* ---- running the tool ---------------------------------------------------------------- */

typedef struct run_result {
    int status; /* exit status, or 128 + signal */
    char* out;  /* stdout */
    char* err;  /* stderr */
} run_result;

static void run_result_free(run_result* r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static int g_serial = 0;

/* Starts the tool with args (NULL-terminated, without argv[0]) in directory
 * cwd (NULL: inherited), stdout and stderr to files named in out/err. */
static pid_t spawn_tool(const char* const* args, const char* cwd, char* out, char* err, size_t size)
{
    int k = g_serial++;
    snprintf(out, size, "%s/stdout_%03d.txt", g_root, k);
    snprintf(err, size, "%s/stderr_%03d.txt", g_root, k);
    const char* argv[64];
    int n = 0;
    argv[n++] = DVI_EXE;
    while (args[n - 1] && n < 63) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(120);
        close(fo);
        close(fe);
        if (cwd && chdir(cwd) != 0) _exit(121);
        execv(DVI_EXE, (char* const*)argv);
        _exit(122);
    }
    return pid;
}

static int wait_status(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return -1;
}

static run_result run_tool_in(const char* cwd, const char* const* args)
{
    char out[600], err[600];
    pid_t pid = spawn_tool(args, cwd, out, err, sizeof out);
    run_result r;
    r.status = wait_status(pid);
    r.out = test_read_text(out, NULL);
    r.err = test_read_text(err, NULL);
    if (!r.out) r.out = calloc(1, 1);
    if (!r.err) r.err = calloc(1, 1);
    return r;
}

#define RUN(...) run_tool_in(NULL, (const char* const[]){__VA_ARGS__, NULL})

static void expect_status(const run_result* r, int status, const char* what)
{
    if (r->status != status) {
        print_error("%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s\n", what, r->status, status, r->out,
                    r->err);
        fail();
    }
}

static void expect_contains(const char* text, const char* needle, const char* what)
{
    if (!strstr(text, needle)) {
        print_error("%s: '%s' not found in:\n%s\n", what, needle, text);
        fail();
    }
}

/* ---- scenes ------------------------------------------------------------------------------- */

/* A ball sliding on a plane (friction, a contact every step), a box dropped
 * onto the plane (impact, then resting contacts) and a pendulum on a
 * revolute joint. dt = 1 ms, 0.2 s = 200 steps. */
static const char* const MIX_SCENE =
    "{\n"
    "  \"name\": \"mix\",\n"
    "  \"units\": \"SI\",\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"materials\": {\"steel\": {\"friction\": 0.3}},\n"
    "  \"bodies\": [\n"
    "    {\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"material\": \"steel\"}]},\n"
    "    {\"name\": \"ball\", \"type\": \"dynamic\", \"mass\": 1.0, \"position\": [0, 0, 0.1],\n"
    "     \"velocity\": [1.0, 0, 0], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, \"material\": \"steel\"}]},\n"
    "    {\"name\": \"box\", \"type\": \"dynamic\", \"mass\": 2.0, \"position\": [1, 0, 0.12],\n"
    "     \"orientation\": [0.9998, 0.02, 0, 0],\n"
    "     \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]},\n"
    "    {\"name\": \"bob\", \"type\": \"dynamic\", \"mass\": 0.5, \"position\": [3.5, 0, 1],\n"
    "     \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.05}]}\n"
    "  ],\n"
    "  \"joints\": [\n"
    "    {\"name\": \"hinge\", \"type\": \"revolute\", \"body_b\": \"bob\", \"anchor\": [3, 0, 1], \"axis\": [0, 1, 0]}\n"
    "  ],\n"
    "  \"formulation\": {\"dt\": 0.001, \"solver\": \"apgd\", \"tolerance\": 1e-8, \"max_iterations\": 500},\n"
    "  \"duration\": 0.2,\n"
    "  \"probes\": [\n"
    "    {\"name\": \"ball_position\", \"title\": \"Ball\", \"what\": \"position\", \"body\": \"ball\", \"every\": 1},\n"
    "    {\"name\": \"box_velocity\", \"what\": \"velocity\", \"body\": \"box\", \"every\": 4},\n"
    "    {\"name\": \"hinge\", \"what\": \"joint_reaction\", \"joint\": \"hinge\", \"every\": 10},\n"
    "    {\"name\": \"solver\", \"what\": \"solver\", \"every\": 5}\n"
    "  ]\n"
    "}\n";

/* Two problems (a probe naming an unknown body, a negative time step) and
 * one unknown key. */
static const char* const BAD_SCENE =
    "{\n"
    "  \"name\": \"bad\",\n"
    "  \"bodies\": [\n"
    "    {\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
    "    {\"name\": \"ball\", \"type\": \"dynamic\", \"mass\": 1.0, \"position\": [0, 0, 0.1],\n"
    "     \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]}\n"
    "  ],\n"
    "  \"formulation\": {\"dt\": -0.001},\n"
    "  \"duration\": 0.2,\n"
    "  \"probes\": [{\"name\": \"p\", \"what\": \"position\", \"body\": \"bal\", \"every\": 1}]\n"
    "}\n";

/* A ball resting on a plane, both with rolling friction: their contact has
 * spin and rolling rows (a friction_rolling block). 20 steps of 1 ms. */
static const char* const ROLL_SCENE =
    "{\n"
    "  \"name\": \"roll\",\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"materials\": {\"rough\": {\"friction\": 0.5, \"rolling_friction\": 0.05}},\n"
    "  \"bodies\": [\n"
    "    {\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"material\": \"rough\"}]},\n"
    "    {\"name\": \"ball\", \"mass\": 1.0, \"position\": [0, 0, 0.1],\n"
    "     \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, \"material\": \"rough\"}]}\n"
    "  ],\n"
    "  \"formulation\": {\"dt\": 0.001, \"solver\": \"apgd\"},\n"
    "  \"duration\": 0.02,\n"
    "  \"probes\": [{\"name\": \"ball\", \"what\": \"position\", \"body\": \"ball\", \"every\": 1}]\n"
    "}\n";

static char g_mix[600], g_bad[600], g_notjson[600], g_roll[600];

static int group_setup(void** state)
{
    (void)state;
    const char* tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/dvi_cli_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_root)) return -1;
    path_in(g_mix, sizeof g_mix, g_root, "mix.json");
    path_in(g_bad, sizeof g_bad, g_root, "bad.json");
    path_in(g_notjson, sizeof g_notjson, g_root, "notjson.json");
    test_write_text(g_mix, MIX_SCENE);
    test_write_text(g_bad, BAD_SCENE);
    path_in(g_roll, sizeof g_roll, g_root, "roll.json");
    test_write_text(g_roll, ROLL_SCENE);
    test_write_text(g_notjson, "{\"name\": \"x\",\n  \"bodies\": [1, 2,\n}\n");
    if (access(DVI_EXE, X_OK) != 0) {
        fprintf(stderr, "%s: not built\n", DVI_EXE);
        return -1;
    }
    return 0;
}

static int group_teardown(void** state)
{
    (void)state;
    if (!getenv("DVI_TEST_KEEP")) test_remove_tree(g_root);
    return 0;
}

/* ---- help, version, usage --------------------------------------------------------------- */

static void test_help_and_version(void** state)
{
    (void)state;
    run_result r = RUN("--help");
    expect_status(&r, 0, "dvi --help");
    expect_contains(r.out, "Usage: dvi", "dvi --help");
    expect_contains(r.out, "run", "dvi --help");
    run_result_free(&r);

    r = RUN("--version");
    expect_status(&r, 0, "dvi --version");
    expect_contains(r.out, DVI_VERSION_STRING, "dvi --version");
    run_result_free(&r);

    static const char* const cmds[] = {"run", "check", "solve"};
    for (int i = 0; i < 3; i++) {
        r = RUN("help", cmds[i]);
        expect_status(&r, 0, "dvi help CMD");
        expect_contains(r.out, "Usage: dvi", "dvi help CMD");
        expect_contains(r.out, cmds[i], "dvi help CMD");
        run_result_free(&r);
        r = RUN(cmds[i], "--help");
        expect_status(&r, 0, "dvi CMD --help");
        expect_contains(r.out, "Usage: dvi", "dvi CMD --help");
        run_result_free(&r);
    }
    r = RUN("run", "--help");
    expect_contains(r.out, "--resume", "dvi run --help");
    expect_contains(r.out, "--checkpoint-every", "dvi run --help");
    run_result_free(&r);
}

/* The options of a command's parser table in its source file (`static const
 * cli_option NAME_options[]`, one {"name", ...} entry a line) each appear as
 * "--name" in `dvi help NAME`. */
static void expect_options_in_help(const char* source, const char* command)
{
    char* text = test_read_text(source, NULL);
    if (!text) {
        print_error("cannot read %s\n", source);
        fail();
    }
    char head[96];
    snprintf(head, sizeof head, "static const cli_option %s_options[] = {", command);
    const char* p = strstr(text, head);
    if (!p) {
        print_error("%s: no table %s_options\n", source, command);
        fail();
    }
    const char* end = strstr(p, "{NULL");
    assert_non_null(end);
    run_result r = RUN("help", command);
    expect_status(&r, 0, "dvi help CMD");
    int n = 0;
    for (p = strstr(p + strlen(head), "{\""); p && p < end; p = strstr(p + 2, "{\"")) {
        const char* q = strchr(p + 2, '"');
        assert_non_null(q);
        char option[80];
        snprintf(option, sizeof option, "--%.*s", (int)(q - p - 2), p + 2);
        char what[160];
        snprintf(what, sizeof what, "dvi help %s names %s (in %s's table)", command, option, command);
        expect_contains(r.out, option, what);
        n++;
    }
    assert_true(n >= 1);
    run_result_free(&r);
    free(text);
}

/* From the registry, as the help should print them: the solvers of Coulomb's
 * law that dvi run takes (their own law first, then those a setting turns
 * to it, with the setting as an option: "lemke --lemke-coulomb"), and those
 * of Coulomb's law that refuse rolling friction. Every name has its index. */
static void registry_lists(char* run, char* no_rolling, size_t size)
{
    size_t n = 0, m = 0;
    run[0] = no_rolling[0] = '\0';
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < dvi_solver_count(); i++) {
            const char* name = dvi_solver_name(i);
            assert_int_equal(dvi_solver_index(name), i);
            const bool own = dvi_solver_law(i) == DVI_LAW_COULOMB;
            if (pass == 0 && own && !dvi_solver_supports(i, DVI_LAW_COULOMB, DVI_BLOCK_FRICTION_ROLLING))
                m += (size_t)snprintf(no_rolling + m, size - m, "%s%s", m ? ", " : "", name);
            if (own != (pass == 0) || !dvi_solver_supports(i, DVI_LAW_COULOMB, DVI_BLOCK_FRICTION)) continue;
            char option[64] = "";
            if (!own) {
                snprintf(option, sizeof option, " --%s", dvi_solver_law_setting(i));
                for (char* c = option; *c; c++)
                    if (*c == '.' || *c == '_') *c = '-';
            }
            n += (size_t)snprintf(run + n, size - n, "%s%s%s", n ? ", " : "", name, option);
            assert_true(n < size && m < size);
        }
}

static void test_help_lists(void** state)
{
    (void)state;
    static const struct {
        const char* source;
        const char* command;
    } tables[] = {{"tool/dvi_run.c", "run"},
                  {"tool/dvi_check.c", "check"},
                  {"tool/dvi_solve.c", "solve"},
                  {"tool/dvi_plot.c", "plot"},
                  {"tool/dvi_study.c", "study"}};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        expect_options_in_help(SRC_PATH(tables[i].source), tables[i].command);

    /* every solver of the registry in the overview and in the help of the
     * commands that take one, with its law */
    static const char* const helps[] = {NULL, "run", "check", "solve"};
    char coulomb_run[256], no_rolling[256];
    registry_lists(coulomb_run, no_rolling, sizeof coulomb_run);
    for (size_t h = 0; h < sizeof helps / sizeof helps[0]; h++) {
        run_result r = helps[h] ? RUN("help", helps[h]) : RUN("--help");
        expect_status(&r, 0, "dvi help");
        for (int32_t i = 0; i < dvi_solver_count(); i++) {
            char what[96];
            snprintf(what, sizeof what, "dvi help %s names solver %s", helps[h] ? helps[h] : "", dvi_solver_name(i));
            expect_contains(r.out, dvi_solver_name(i), what);
        }
        if (!helps[h] || strcmp(helps[h], "solve") != 0)
            expect_contains(r.out, coulomb_run, "the Coulomb solvers of dvi run");
        run_result_free(&r);
    }
    run_result c = RUN("help", "check");
    expect_contains(c.out, no_rolling, "dvi help check: the Coulomb solvers without rolling friction");
    run_result_free(&c);
    run_result r = RUN("help", "run");
    expect_contains(r.out, "--strict", "dvi help run");
    run_result_free(&r);

    /* the --solver rows of the manual name every solver of the registry */
    char* doc = test_read_text(SRC_PATH("docs/cli.md"), NULL);
    assert_non_null(doc);
    int rows = 0;
    for (const char* p = strstr(doc, "| `--solver NAME` |"); p; p = strstr(p + 1, "| `--solver NAME` |")) {
        const char* eol = strchr(p, '\n');
        assert_non_null(eol);
        for (int32_t i = 0; i < dvi_solver_count(); i++) {
            char name[40];
            snprintf(name, sizeof name, "`%s`", dvi_solver_name(i));
            const char* at = strstr(p, name);
            if (!at || at > eol) {
                print_error("docs/cli.md: a --solver row does not name %s: %.*s\n", name, (int)(eol - p), p);
                fail();
            }
        }
        rows++;
    }
    assert_int_equal(rows, 4); /* run, check, solve, study */
    free(doc);
}

/* The friction law under its deprecated key formulation.friction: check and
 * run read it, print a warning naming the place and the new key, and go on;
 * under formulation.friction_law no warning. */
static void test_friction_law_key(void** state)
{
    (void)state;
    static const char* const scene =
        "{\"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]}],\n"
        " \"formulation\": {\"dt\": 0.001, \"solver\": \"nsgs\", \"%s\": \"coulomb\"}, \"duration\": 0.005}\n";
    char path[700], text[512], out[700];
    path_in(path, sizeof path, g_root, "old_law_key.json");
    snprintf(text, sizeof text, scene, "friction");
    test_write_text(path, text);
    run_result c = RUN("check", path);
    expect_status(&c, 0, "check, deprecated key");
    expect_contains(c.err, "old_law_key.json: warning: formulation.friction: deprecated key for the friction law: "
                           "write formulation.friction_law",
                    "the warning names the place and the new key");
    expect_contains(c.out, "friction    coulomb", "the deprecated key still sets the law");
    run_result_free(&c);
    path_in(out, sizeof out, g_root, "old_law_key");
    run_result r = RUN("run", path, "--quiet", "--out", out);
    expect_status(&r, 0, "run, deprecated key");
    expect_contains(r.err, "warning: formulation.friction: deprecated key", "run prints the warning too");
    run_result_free(&r);
    snprintf(text, sizeof text, scene, "friction_law");
    test_write_text(path, text);
    c = RUN("check", path);
    expect_status(&c, 0, "check, new key");
    assert_null(strstr(c.err, "warning"));
    run_result_free(&c);
}

/* Rolling friction under Coulomb's law: nsgs and newton do not take the
 * friction_rolling blocks; check and run refuse them at their start with the
 * same message, naming the two shapes and the solvers that take them; the
 * first of those runs the scene: the ball stays on the plane (z = 0.1 m). */
static void test_solver_choice(void** state)
{
    (void)state;
    static const char* const refused[] = {"nsgs", "newton"};
    char first[64] = "";
    for (int i = 0; i < 2; i++) {
        run_result c = RUN("check", g_roll, "--friction", "coulomb", "--solver", refused[i]);
        expect_status(&c, 2, "check --friction coulomb --solver nsgs|newton");
        expect_contains(c.err, "friction_rolling", "the refusal names the block");
        expect_contains(c.err, "bodies[1].shapes[0] (\"ball\") and bodies[0].shapes[0] (\"ground\")",
                        "the refusal names the shapes");
        expect_contains(c.err, "(rolling_friction > 0 on both); solvers that do: desaxce or lemke with --lemke-coulomb",
                        "the refusal names the solvers that take the blocks");
        const char* at = strstr(c.err, "solvers that do: ");
        sscanf(at + strlen("solvers that do: "), "%63[a-z]", first);
        char out[700];
        path_in(out, sizeof out, g_root, "roll_refused");
        run_result r = RUN("run", g_roll, "--friction", "coulomb", "--solver", refused[i], "--quiet", "--out", out);
        expect_status(&r, 2, "run --friction coulomb --solver nsgs|newton");
        /* the same check: the same first line */
        const char* nl = strchr(c.err, '\n');
        assert_non_null(nl);
        if (strncmp(c.err, r.err, (size_t)(nl - c.err + 1)) != 0) {
            print_error("check and run differ:\n%s\n%s\n", c.err, r.err);
            fail();
        }
        assert_false(exists(out)); /* refused before any output */
        run_result_free(&c);
        run_result_free(&r);
    }
    assert_string_equal(first, "desaxce");
    /* the recommended solver runs the scene, and so does lemke with --lemke-coulomb */
    const char* const ok[][2] = {{first, NULL}, {"lemke", "--lemke-coulomb"}};
    for (int i = 0; i < 2; i++) {
        char out[700], csv[800];
        snprintf(out, sizeof out, "%s/roll_%s", g_root, ok[i][0]);
        run_result c = ok[i][1] ? RUN("check", g_roll, "--friction", "coulomb", "--solver", ok[i][0], ok[i][1])
                                : RUN("check", g_roll, "--friction", "coulomb", "--solver", ok[i][0]);
        expect_status(&c, 0, "check with a solver that takes the blocks");
        expect_contains(c.out, "friction    coulomb", "check with a solver that takes the blocks");
        run_result_free(&c);
        run_result r = ok[i][1] ? RUN("run", g_roll, "--friction", "coulomb", "--solver", ok[i][0], ok[i][1],
                                      "--quiet", "--out", out)
                                : RUN("run", g_roll, "--friction", "coulomb", "--solver", ok[i][0], "--quiet", "--out", out);
        expect_status(&r, 0, "run with a solver that takes the blocks");
        run_result_free(&r);
        path_in(csv, sizeof csv, out, "ball.csv");
        double last[4];
        assert_int_equal(csv_rows(csv, 4, last), 21);
        assert_near(last[0], 0.02, 1e-12);
        assert_near(last[1], 0.0, 1e-9);     /* x: at rest */
        assert_near(last[3], 0.1, 1e-5);     /* z: on the plane, not through it */
        if (ok[i][1]) { /* the checkpoint keeps --lemke-coulomb: a resumed run is not refused */
            r = RUN("run", "--resume", out, "--duration", "0.03", "--quiet");
            expect_status(&r, 0, "run --resume of a run with --lemke-coulomb");
            run_result_free(&r);
            assert_int_equal(csv_rows(csv, 4, last), 31);
            assert_near(last[3], 0.1, 1e-5);
        }
    }
    /* lemke without its option is refused, naming the option */
    run_result c = RUN("check", g_roll, "--friction", "coulomb", "--solver", "lemke");
    expect_status(&c, 2, "check --solver lemke --friction coulomb");
    expect_contains(c.err, "--solver: \"lemke\" without lemke.coulomb solves the CCP but --friction is \"coulomb\" "
                           "(its solvers: desaxce or lemke with --lemke-coulomb)",
                    "check --solver lemke --friction coulomb");
    run_result_free(&c);
    /* under the CCP every solver of the CCP takes the scene */
    c = RUN("check", g_roll, "--solver", "pgs");
    expect_status(&c, 0, "check --solver pgs");
    run_result_free(&c);
}

static void test_usage_errors(void** state)
{
    (void)state;
    run_result r = run_tool_in(NULL, (const char* const[]){NULL});
    expect_status(&r, 2, "dvi without arguments");
    run_result_free(&r);

    r = RUN("frobnicate");
    expect_status(&r, 2, "unknown command");
    expect_contains(r.err, "unknown command 'frobnicate'", "unknown command");
    run_result_free(&r);

    r = RUN("--frobnicate");
    expect_status(&r, 2, "unknown global option");
    expect_contains(r.err, "unknown option", "unknown global option");
    run_result_free(&r);

    r = RUN("run", g_mix, "--frobnicate", "3");
    expect_status(&r, 2, "unknown run option");
    expect_contains(r.err, "unknown option '--frobnicate'", "unknown run option");
    assert_null(strstr(r.err, "did you mean")); /* nothing near it */
    run_result_free(&r);

    /* a near miss gets the option it most likely meant: two letters swapped, one
     * missing, the beginning of only one option */
    static const char* const miss[][2] = {
        {"--durration", "'--duration'"}, {"--thread", "'--threads'"}, {"--contacts", "'--contacts-every'"}};
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++) {
        r = RUN("run", g_mix, miss[i][0], "1");
        expect_status(&r, 2, "mistyped run option");
        char want[64];
        snprintf(want, sizeof want, "(did you mean %s?)", miss[i][1]);
        expect_contains(r.err, want, "mistyped run option");
        run_result_free(&r);
    }

    r = RUN("run");
    expect_status(&r, 2, "run without a scene");
    expect_contains(r.err, "missing SCENE", "run without a scene");
    run_result_free(&r);

    r = RUN("run", g_mix, "--dt", "fast");
    expect_status(&r, 2, "run --dt fast");
    expect_contains(r.err, "--dt", "run --dt fast");
    run_result_free(&r);

    r = RUN("run", g_mix, "--dt");
    expect_status(&r, 2, "run --dt without value");
    expect_contains(r.err, "needs a value", "run --dt without value");
    run_result_free(&r);

    r = RUN("run", g_mix, "--solver", "simplex");
    expect_status(&r, 2, "run --solver simplex");
    expect_contains(r.err, "unknown solver", "run --solver simplex");
    run_result_free(&r);

    r = RUN("run", g_mix, "--method", "dme", "--quiet");
    expect_status(&r, 2, "run --method dme");
    expect_contains(r.err, "--method: must be dvi or dem", "run --method dme");
    run_result_free(&r);

    r = RUN("run", g_mix, "--friction", "colomb", "--quiet");
    expect_status(&r, 2, "run --friction colomb");
    expect_contains(r.err, "--friction: must be ccp or coulomb", "run --friction colomb");
    run_result_free(&r);

    /* the scene's CCP solver cannot solve Coulomb's law: refused before the run */
    r = RUN("run", g_mix, "--friction", "coulomb", "--quiet");
    expect_status(&r, 2, "run --friction coulomb");
    expect_contains(r.err, "solves the CCP but --friction is \"coulomb\"", "run --friction coulomb");
    run_result_free(&r);

    r = RUN("run", g_mix, "--vtk-every", "0");
    expect_status(&r, 2, "run --vtk-every 0");
    run_result_free(&r);

    r = RUN("run", "--resume", g_root, "--dt", "0.01");
    expect_status(&r, 2, "run --resume with --dt");
    expect_contains(r.err, "cannot be changed", "run --resume with --dt");
    run_result_free(&r);

    r = RUN("run", "--resume", g_root); /* no checkpoint there */
    expect_status(&r, 2, "run --resume without checkpoint");
    expect_contains(r.err, "run.json", "run --resume without checkpoint");
    run_result_free(&r);

    r = RUN("help", "frobnicate");
    expect_status(&r, 2, "help frobnicate");
    run_result_free(&r);

    r = RUN("check");
    expect_status(&r, 2, "check without scene");
    run_result_free(&r);

    r = RUN("check", g_mix, "--strict");
    expect_status(&r, 2, "check --strict");
    run_result_free(&r);

    r = RUN("solve");
    expect_status(&r, 2, "solve without problem");
    run_result_free(&r);
}

/* ---- check ------------------------------------------------------------------------------- */

static void test_check(void** state)
{
    (void)state;
    run_result r = RUN("check", g_mix);
    expect_status(&r, 0, "check mix.json");
    expect_contains(r.out, "valid", "check mix.json");
    expect_contains(r.out, "bodies      4", "check mix.json");
    expect_contains(r.out, "joints      1", "check mix.json");
    expect_contains(r.out, "probes      4", "check mix.json");
    expect_contains(r.out, "ball_position", "check mix.json");
    expect_contains(r.out, "apgd", "check mix.json");
    expect_contains(r.out, "200 steps", "check mix.json");
    run_result_free(&r);

    r = RUN("check", g_bad);
    expect_status(&r, 2, "check bad.json");
    /* every line names the file and a JSON path */
    char prefix[700];
    snprintf(prefix, sizeof prefix, "%s: ", g_bad);
    expect_contains(r.err, "formulation.dt", "check bad.json");
    expect_contains(r.err, "probes[0].body", "check bad.json");
    int lines = 0;
    for (char* line = r.err; *line;) {
        char* nl = strchr(line, '\n');
        assert_non_null(nl);
        if (strncmp(line, prefix, strlen(prefix)) != 0) {
            print_error("error line without the scene path: '%.*s'\n", (int)(nl - line), line);
            fail();
        }
        lines++;
        line = nl + 1;
    }
    assert_true(lines >= 2);
    run_result_free(&r);

    r = RUN("check", g_notjson);
    expect_status(&r, 2, "check notjson.json");
    expect_contains(r.err, g_notjson, "check notjson.json");
    run_result_free(&r);

    char missing[700];
    path_in(missing, sizeof missing, g_root, "no_such_scene.json");
    r = RUN("check", missing);
    expect_status(&r, 2, "check a missing file");
    expect_contains(r.err, missing, "check a missing file");
    run_result_free(&r);

    /* run refuses the bad scene the same way, before writing anything */
    char out[700];
    path_in(out, sizeof out, g_root, "bad_out");
    r = RUN("run", g_bad, "--out", out, "--quiet");
    expect_status(&r, 2, "run bad.json");
    expect_contains(r.err, "probes[0].body", "run bad.json");
    assert_false(exists(out));
    run_result_free(&r);
}

/* ---- run --------------------------------------------------------------------------------- */

static void test_run_outputs(void** state)
{
    (void)state;
    char out[700];
    path_in(out, sizeof out, g_root, "run1");
    run_result r = RUN("run", g_mix, "--out", out, "--vtk-every", "50", "--log-every", "50");
    expect_status(&r, 0, "run mix.json");
    /* progress: one plain line every 50 steps (stderr is a file) */
    expect_contains(r.err, "step 50/200", "run progress");
    expect_contains(r.err, "step 200/200", "run progress");
    assert_null(strchr(r.err, '\r'));
    /* the step time in ms or s, never with an exponent */
    expect_contains(r.err, " ms/step", "run progress");
    assert_null(strstr(r.err, "e+"));
    run_result_free(&r);

    static const char* const files[] = {"summary.json",     "ball_position.csv", "ball_position.svg",
                                        "box_velocity.csv", "box_velocity.svg",  "hinge.csv",
                                        "hinge.svg",        "solver.csv",        "solver.svg",
                                        "checkpoint/run.json", "vtk/bodies.pvd", "vtk/contacts.pvd",
                                        "vtk/shapes.pvd",   "vtk/static.vtp"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) assert_exists(out, files[i]);
    char p[1024];
    path_in(p, sizeof p, out, "checkpoint");
    assert_int_equal(count_files(p, "state-"), 1);
    assert_exists(out, "checkpoint/state-000000000200.bin");
    /* frames at steps 0, 50, 100, 150, 200, their arrays in base64 binary */
    path_in(p, sizeof p, out, "vtk/frames");
    assert_int_equal(count_files(p, "bodies_"), 5);
    assert_int_equal(count_files(p, "shapes_"), 5);
    path_in(p, sizeof p, out, "vtk/frames/bodies_000001.vtp");
    char* frame = test_read_text(p, NULL);
    assert_non_null(frame);
    expect_contains(frame, "format=\"binary\"", "a VTK frame");
    assert_null(strstr(frame, "format=\"ascii\""));
    free(frame);

    /* rows: t = 0, then one every `every` steps: 200/every + 1 */
    double last[4];
    path_in(p, sizeof p, out, "ball_position.csv");
    assert_int_equal(csv_rows(p, 4, last), 201);
    assert_near(last[0], 0.2, 1e-9);
    assert_near(last[3], 0.1, 2e-3); /* the ball stays on the plane */
    assert_true(last[1] > 0.05);     /* ... and slides forward */
    path_in(p, sizeof p, out, "box_velocity.csv");
    assert_int_equal(csv_rows(p, 0, NULL), 51);
    path_in(p, sizeof p, out, "hinge.csv");
    assert_int_equal(csv_rows(p, 0, NULL), 21);
    /* simulated time is the step count times dt, not a sum of the steps
     * (200 steps of 1 ms sum to 0.20000000000000015): in the frames' times
     * and in summary.json, written to the last bit */
    double sum = 0.0;
    for (int k = 0; k < 200; k++) sum += 0.001;
    assert_true(sum != 0.2);
    path_in(p, sizeof p, out, "vtk/bodies.pvd");
    char* pvd = test_read_text(p, NULL);
    assert_non_null(pvd);
    int frames = 0;
    for (const char* q = strstr(pvd, "timestep=\""); q; q = strstr(q + 1, "timestep=\"")) {
        const double t = strtod(q + 10, NULL);
        assert_true(t == (double)(50 * frames) * 0.001);
        frames++;
    }
    assert_int_equal(frames, 5);
    free(pvd);
    /* dvi plot redraws a probe's CSV: chosen columns, the default path beside it */
    path_in(p, sizeof p, out, "solver.csv");
    run_result pr = RUN("plot", p, "--columns", "residual,iterations");
    expect_status(&pr, 0, "plot solver.csv");
    run_result_free(&pr);
    path_in(p, sizeof p, out, "solver.svg");
    char* plot = test_read_text(p, NULL);
    assert_non_null(plot);
    int plot_lines = 0;
    for (const char* q = strstr(plot, "<g class=\"line\""); q; q = strstr(q + 1, "<g class=\"line\"")) plot_lines++;
    assert_int_equal(plot_lines, 2);
    expect_contains(plot, "data-name=\"residual\"", "dvi plot --columns");
    assert_null(strstr(plot, "data-name=\"contacts\""));
    free(plot);
    path_in(p, sizeof p, out, "solver.csv");
    pr = RUN("plot", p, "--columns", "residul");
    expect_status(&pr, 2, "plot with a missing column");
    expect_contains(pr.err, "no column 'residul'", "plot with a missing column");
    run_result_free(&pr);

    path_in(p, sizeof p, out, "ball_position.svg");
    char* svg = test_read_text(p, NULL);
    assert_non_null(svg);
    expect_contains(svg, "<svg", "ball_position.svg");
    expect_contains(svg, "polyline", "ball_position.svg");
    free(svg);

    path_in(p, sizeof p, out, "summary.json");
    cJSON* s = read_json(p);
    assert_int_equal((int)json_number(s, "steps"), 200);
    assert_true(json_number(s, "simulated_time") == 200 * 0.001);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "interrupted")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "status")->valuestring, "finished");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "dvi_version")->valuestring, dvi_version_string());
    assert_true(json_number(s, "wall_seconds") >= 0);
    const cJSON* settings = cJSON_GetObjectItemCaseSensitive(s, "settings");
    assert_near(json_number(settings, "dt"), 0.001, 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(settings, "solver")->valuestring, "apgd");
    const cJSON* timings = cJSON_GetObjectItemCaseSensitive(s, "timings");
    static const char* const phases[] = {"collide", "assemble", "solve", "integrate"};
    for (int i = 0; i < 4; i++) assert_true(json_number(timings, phases[i]) >= 0);
    const cJSON* sv = cJSON_GetObjectItemCaseSensitive(s, "solver");
    double it_mean = json_number(sv, "iterations_mean"), it_max = json_number(sv, "iterations_max");
    assert_true(it_mean > 0 && it_mean <= it_max && it_max <= 500);
    double res = json_number(sv, "residual_max");
    assert_true(res >= 0 && isfinite(res));
    assert_true(json_number(sv, "not_converged_steps") >= 0);
    double pen = json_number(s, "max_penetration");
    assert_true(pen >= 0 && pen < 0.01);
    double jv = json_number(s, "max_joint_violation");
    assert_true(jv >= 0 && jv < 1e-3);
    assert_true(json_number(s, "contacts_max") >= 2);
    const cJSON* probes = cJSON_GetObjectItemCaseSensitive(s, "probes");
    assert_int_equal(cJSON_GetArraySize(probes), 4);
    assert_int_equal((int)json_number(cJSON_GetArrayItem(probes, 0), "rows"), 201);
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s, "warnings")));
    cJSON_Delete(s);

    /* a new run into the same directory leaves nothing of the old one */
    r = RUN("run", g_mix, "--out", out, "--duration", "0.05", "--quiet");
    expect_status(&r, 0, "second run into the same directory");
    run_result_free(&r);
    path_in(p, sizeof p, out, "vtk/frames");
    assert_int_equal(count_files(p, "bodies_"), 0);
    assert_int_equal(count_files(p, "contacts_"), 0);
    path_in(p, sizeof p, out, "vtk");
    assert_int_equal(count_files(p, "bodies.pvd"), 0);
    path_in(p, sizeof p, out, "checkpoint");
    assert_int_equal(count_files(p, "state-"), 1);
    assert_exists(out, "checkpoint/state-000000000050.bin");
    path_in(p, sizeof p, out, "ball_position.csv");
    assert_int_equal(csv_rows(p, 4, NULL), 51);

    /* overrides: --dt and --duration change the number of rows */
    path_in(out, sizeof out, g_root, "run2");
    r = RUN("run", g_mix, "--out", out, "--dt", "0.002", "--duration", "0.1", "--solver", "pgs", "--quiet");
    expect_status(&r, 0, "run with overrides");
    assert_string_equal(r.err, ""); /* --quiet */
    run_result_free(&r);
    path_in(p, sizeof p, out, "ball_position.csv");
    assert_int_equal(csv_rows(p, 4, last), 51);
    assert_near(last[0], 0.1, 1e-9);
    path_in(p, sizeof p, out, "summary.json");
    s = read_json(p);
    settings = cJSON_GetObjectItemCaseSensitive(s, "settings");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(settings, "solver")->valuestring, "pgs");
    assert_int_equal((int)json_number(s, "steps"), 50);
    cJSON_Delete(s);
    assert_false(exists(out) && count_files(out, "vtk") > 0); /* no --vtk-every: no frames */

    /* default directory: out/<scene name> under the working directory */
    r = run_tool_in(g_root, (const char* const[]){"run", "mix.json", "--duration", "0.01", "--quiet", NULL});
    expect_status(&r, 0, "run with the default output directory");
    run_result_free(&r);
    assert_exists(g_root, "out/mix/summary.json");
    assert_exists(g_root, "out/mix/ball_position.csv");
}

/* A step whose solver misses its tolerance is counted and warned about,
 * not an error. */
static void test_not_converged(void** state)
{
    (void)state;
    char scene[700], out[700], p[1024];
    path_in(scene, sizeof scene, g_root, "loose.json");
    path_in(out, sizeof out, g_root, "loose");
    char* text = malloc(strlen(MIX_SCENE) + 1);
    assert_non_null(text);
    strcpy(text, MIX_SCENE);
    char* at = strstr(text, "\"max_iterations\": 500");
    assert_non_null(at);
    memcpy(at, "\"max_iterations\":   3", strlen("\"max_iterations\": 500"));
    test_write_text(scene, text);
    free(text);
    run_result r = RUN("run", scene, "--out", out, "--duration", "0.1", "--quiet");
    expect_status(&r, 0, "run with 3 iterations per step");
    run_result_free(&r);
    path_in(p, sizeof p, out, "summary.json");
    cJSON* s = read_json(p);
    const cJSON* sv = cJSON_GetObjectItemCaseSensitive(s, "solver");
    double nc = json_number(sv, "not_converged_steps");
    assert_true(nc > 0 && nc <= 100);
    assert_true(json_number(sv, "iterations_max") <= 3);
    assert_true(json_number(sv, "first_not_converged_step") >= 1);
    const cJSON* warnings = cJSON_GetObjectItemCaseSensitive(s, "warnings");
    assert_true(cJSON_GetArraySize(warnings) >= 1);
    expect_contains(cJSON_GetArrayItem(warnings, 0)->valuestring, "did not converge", "summary warnings");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "status")->valuestring, "finished");
    cJSON_Delete(s);
}

/* ---- resume ------------------------------------------------------------------------------- */

/* Two CSVs hold the same rows: byte-identical lines, except in columns
 * whose title starts with "wall_" (wall-clock seconds of the solver probe,
 * which no two runs share). */
static void assert_same_csv(const char* a, const char* b)
{
    char* ta = test_read_text(a, NULL);
    char* tb = test_read_text(b, NULL);
    if (!ta || !tb) {
        print_error("cannot read %s or %s\n", a, b);
        fail();
    }
    bool skip[256] = {false};
    bool masked = false;
    {
        const char* h = ta;
        int col = 0;
        while (*h && *h != '\n') {
            if (strncmp(h, "wall_", 5) == 0 && col < 256) skip[col] = masked = true;
            while (*h && *h != ',' && *h != '\n') h++;
            if (*h == ',') h++, col++;
        }
    }
    if (!masked) {
        free(ta);
        free(tb);
        assert_same_file(a, b);
        return;
    }
    char *sa = NULL, *sb = NULL;
    char* la = strtok_r(ta, "\n", &sa);
    char* lb = strtok_r(tb, "\n", &sb);
    long line = 1;
    while (la && lb) {
        char *fa = NULL, *fb = NULL;
        char* xa = strtok_r(la, ",", &fa);
        char* xb = strtok_r(lb, ",", &fb);
        for (int col = 0; xa || xb; col++) {
            if (!xa || !xb || (!(col < 256 && skip[col]) && strcmp(xa, xb) != 0)) {
                print_error("%s and %s differ at line %ld, column %d ('%s' and '%s')\n", a, b, line, col,
                            xa ? xa : "(none)", xb ? xb : "(none)");
                fail();
            }
            xa = strtok_r(NULL, ",", &fa);
            xb = strtok_r(NULL, ",", &fb);
        }
        la = strtok_r(NULL, "\n", &sa);
        lb = strtok_r(NULL, "\n", &sb);
        line++;
    }
    if (la || lb) {
        print_error("%s and %s have different numbers of lines\n", a, b);
        fail();
    }
    free(ta);
    free(tb);
}

/* The dynamic state of every body, bit for bit. */
static void assert_same_bodies(const dvi_model* ma, const dvi_model* mb)
{
    const dvi_world* wa = dvi_model_world_const(ma);
    const dvi_world* wb = dvi_model_world_const(mb);
    assert_int_equal(dvi_model_step_count(ma), dvi_model_step_count(mb));
    double ta = dvi_model_time(ma), tb = dvi_model_time(mb);
    assert_memory_equal(&ta, &tb, sizeof ta);
    int32_t n = dvi_world_body_count(wa);
    assert_int_equal(n, dvi_world_body_count(wb));
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id a, b;
        assert_int_equal(dvi_world_body_at(wa, i, &a), DVI_OK);
        assert_int_equal(dvi_world_body_at(wb, i, &b), DVI_OK);
        double xa[19], xb[19]; /* x, q, v, w, contact force and torque */
        test_body_state(wa, a, xa);
        test_body_state(wb, b, xb);
        if (memcmp(xa, xb, sizeof xa) != 0) {
            print_error("body %d: states differ (x %.17g/%.17g, z %.17g/%.17g)\n", (int)i, xa[0], xb[0], xa[2], xb[2]);
            fail();
        }
    }
}

/* Two checkpoint blobs hold the same state: loaded into models built from
 * the scene, every body matches bit for bit, and still does after 25 more
 * steps (which also compares the warm-start history). The blobs themselves
 * are compared byte for byte when byte_identical is set. */
static void assert_same_state(const char* scene_path, const char* a, const char* b, bool byte_identical)
{
    if (byte_identical) assert_same_file(a, b);
    size_t na = 0, nb = 0;
    char* ba = test_read_text(a, &na);
    char* bb = test_read_text(b, &nb);
    assert_non_null(ba);
    assert_non_null(bb);
    assert_int_equal(na, nb);
    dvi_scene* scene = NULL;
    assert_int_equal(dvi_scene_load(scene_path, &scene, NULL), DVI_OK);
    dvi_model *ma = NULL, *mb = NULL;
    assert_int_equal(dvi_model_create(scene, &ma, NULL, 0), DVI_OK);
    assert_int_equal(dvi_model_create(scene, &mb, NULL, 0), DVI_OK);
    char msg[256];
    assert_int_equal(dvi_model_load_state(ma, ba, na, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_load_state(mb, bb, nb, msg, sizeof msg), DVI_OK);
    assert_same_bodies(ma, mb);
    for (int k = 0; k < 25; k++) {
        assert_true(dvi_model_step(ma) >= 0);
        assert_true(dvi_model_step(mb) >= 0);
    }
    assert_same_bodies(ma, mb);
    dvi_model_destroy(ma);
    dvi_model_destroy(mb);
    dvi_scene_destroy(scene);
    free(ba);
    free(bb);
}

/* The state blobs leave the wall-clock timings out (stored as 0), so the
 * blobs of a straight and a resumed run must be equal byte for byte. */
#define STATE_BLOBS_BYTE_IDENTICAL 1

static void compare_runs(const char* a, const char* b, const char* state_file)
{
    static const char* const csvs[] = {"ball_position.csv", "box_velocity.csv", "hinge.csv", "solver.csv"};
    char pa[1024], pb[1024];
    for (int i = 0; i < 4; i++) {
        path_in(pa, sizeof pa, a, csvs[i]);
        path_in(pb, sizeof pb, b, csvs[i]);
        assert_same_csv(pa, pb);
    }
    char rel[128];
    snprintf(rel, sizeof rel, "checkpoint/%s", state_file);
    path_in(pa, sizeof pa, a, rel);
    path_in(pb, sizeof pb, b, rel);
    assert_same_state(g_mix, pa, pb, STATE_BLOBS_BYTE_IDENTICAL);
}

static void test_resume_round_trip(void** state)
{
    (void)state;
    char straight[700], split[700], periodic[700];
    path_in(straight, sizeof straight, g_root, "straight");
    path_in(split, sizeof split, g_root, "split");
    path_in(periodic, sizeof periodic, g_root, "periodic");

    run_result r = RUN("run", g_mix, "--out", straight, "--duration", "0.2", "--quiet");
    expect_status(&r, 0, "straight run");
    run_result_free(&r);

    r = RUN("run", g_mix, "--out", split, "--duration", "0.1", "--quiet");
    expect_status(&r, 0, "first half");
    run_result_free(&r);
    char p[1024];
    path_in(p, sizeof p, split, "ball_position.csv");
    assert_int_equal(csv_rows(p, 4, NULL), 101);
    r = RUN("run", "--resume", split, "--duration", "0.2", "--quiet");
    expect_status(&r, 0, "resume to 0.2 s");
    run_result_free(&r);
    compare_runs(straight, split, "state-000000000200.bin");
    path_in(p, sizeof p, split, "checkpoint");
    assert_int_equal(count_files(p, "state-"), 1); /* the step-100 blob is gone */

    path_in(p, sizeof p, split, "summary.json");
    cJSON* s = read_json(p);
    assert_int_equal((int)json_number(s, "steps"), 200);
    assert_int_equal((int)json_number(s, "resumed_from_step"), 100);
    assert_int_equal((int)json_number(s, "runs"), 2);
    cJSON_Delete(s);

    /* an end before the checkpoint is refused, and changes nothing */
    r = RUN("run", "--resume", split, "--duration", "0.05");
    expect_status(&r, 2, "resume to an earlier time");
    expect_contains(r.err, "already at step 200", "resume to an earlier time");
    run_result_free(&r);

    /* resuming a finished run without a new duration: nothing to do */
    r = RUN("run", "--resume", split);
    expect_status(&r, 0, "resume a finished run");
    run_result_free(&r);
    compare_runs(straight, split, "state-000000000200.bin");

    /* periodic checkpoints (every 30 steps) do not change the results */
    r = RUN("run", g_mix, "--out", periodic, "--checkpoint-every", "30", "--quiet");
    expect_status(&r, 0, "run with checkpoints every 30 steps");
    run_result_free(&r);
    compare_runs(straight, periodic, "state-000000000200.bin");
    path_in(p, sizeof p, periodic, "checkpoint");
    assert_int_equal(count_files(p, "state-"), 1);

    /* so do checkpoints by wall time (every 3 ms here: at steps the machine
     * decides); by default one every 10 minutes */
    char by_wall[700];
    path_in(by_wall, sizeof by_wall, g_root, "by_wall");
    r = RUN("run", g_mix, "--out", by_wall, "--checkpoint-minutes", "0.00005", "--quiet");
    expect_status(&r, 0, "run with checkpoints every 3 ms of wall time");
    run_result_free(&r);
    compare_runs(straight, by_wall, "state-000000000200.bin");
    path_in(p, sizeof p, by_wall, "summary.json");
    s = read_json(p);
    assert_true(json_number(cJSON_GetObjectItemCaseSensitive(s, "settings"), "checkpoint_minutes") == 0.00005);
    cJSON_Delete(s);
    path_in(p, sizeof p, straight, "summary.json");
    s = read_json(p);
    assert_true(json_number(cJSON_GetObjectItemCaseSensitive(s, "settings"), "checkpoint_minutes") == 10.0);
    cJSON_Delete(s);
    r = RUN("run", g_mix, "--out", by_wall, "--checkpoint-minutes", "-1");
    expect_status(&r, 2, "negative --checkpoint-minutes");
    expect_contains(r.err, "--checkpoint-minutes: must be >= 0", "negative --checkpoint-minutes");
    run_result_free(&r);

    /* a changed scene file is refused */
    char copy[700], moved[700];
    path_in(copy, sizeof copy, g_root, "mix_copy.json");
    path_in(moved, sizeof moved, g_root, "copy_out");
    test_write_text(copy, MIX_SCENE);
    r = RUN("run", copy, "--out", moved, "--duration", "0.01", "--quiet");
    expect_status(&r, 0, "run mix_copy.json");
    run_result_free(&r);
    char* changed = test_read_text(copy, NULL);
    changed[strlen(changed) - 1] = ' '; /* same JSON, different bytes */
    test_write_text(copy, changed);
    free(changed);
    r = RUN("run", "--resume", moved, "--duration", "0.02");
    expect_status(&r, 2, "resume after the scene changed");
    expect_contains(r.err, "changed", "resume after the scene changed");
    run_result_free(&r);

    /* a run.json whose step is not the state's is refused (it would have
     * resumed with a CSV row missing) */
    path_in(p, sizeof p, split, "checkpoint/run.json");
    char* rj = test_read_text(p, NULL);
    char* at = strstr(rj, "\"step\": 200");
    assert_non_null(at);
    at[10] = '1'; /* 200 -> 201 */
    test_write_text(p, rj);
    free(rj);
    r = RUN("run", "--resume", split, "--duration", "0.3");
    expect_status(&r, 2, "resume with run.json's step changed");
    expect_contains(r.err, "the state is at step 200, run.json says 201", "resume with run.json's step changed");
    run_result_free(&r);
}

/* ---- DEM ----------------------------------------------------------------------------------- */

/* --method dem runs the mix scene on penalty contacts (the default material:
 * E = 1e7 Pa) with --dt 1e-4: 500 steps, the joint solved directly (0
 * iterations), the ball resting on its elastic overlap. A run split in two
 * by --resume ends byte-identical to the straight one: the checkpoints hold
 * the DEM contact history. The state loads into a DEM model of the scene and
 * is refused by a DVI one. A step far too long ends the run with exit 1. */
static void test_run_dem(void** state)
{
    (void)state;
    char straight[700], split[700], p[1024], pb[1024];
    path_in(straight, sizeof straight, g_root, "dem_straight");
    path_in(split, sizeof split, g_root, "dem_split");
    run_result r =
        RUN("run", g_mix, "--method", "dem", "--dt", "1e-4", "--duration", "0.1", "--out", straight, "--quiet");
    expect_status(&r, 0, "run --method dem");
    run_result_free(&r);
    /* its first line names the method, not the scene's CCP solver */
    path_in(p, sizeof p, g_root, "dem_first_line");
    r = RUN("run", g_mix, "--method", "dem", "--dt", "1e-4", "--duration", "0.001", "--out", p);
    expect_status(&r, 0, "run --method dem");
    expect_contains(r.err, "steps of 0.0001 s with DEM penalty contacts;", "run --method dem");
    run_result_free(&r);
    path_in(p, sizeof p, straight, "summary.json");
    cJSON* s = read_json(p);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "status")->valuestring, "finished");
    assert_int_equal((int)json_number(s, "steps"), 1000);
    const cJSON* settings = cJSON_GetObjectItemCaseSensitive(s, "settings");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(settings, "method")->valuestring, "dem");
    const cJSON* ov = cJSON_GetObjectItemCaseSensitive(s, "overrides");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ov, "method")->valuestring, "dem");
    const cJSON* sv = cJSON_GetObjectItemCaseSensitive(s, "solver");
    assert_true(json_number(sv, "iterations_max") == 0);
    assert_true(json_number(sv, "residual_max") < 1e-10);
    double pen = json_number(s, "max_penetration");
    assert_true(pen > 0 && pen < 2e-3);
    assert_true(json_number(s, "contacts_max") >= 3); /* the ball, and the box on its corners */
    cJSON_Delete(s);
    double last[4];
    path_in(p, sizeof p, straight, "ball_position.csv");
    /* every 1 of the scene's 1 ms steps: by time at --dt 1e-4, 101 rows over 0.1 s */
    assert_int_equal(csv_rows(p, 4, last), 101);
    assert_near(last[0], 0.1, 1e-9);
    assert_near(last[3], 0.1, 1e-3); /* resting on the plane, overlap included */
    assert_true(last[1] > 0.02);     /* ... and moving forward */
    path_in(p, sizeof p, straight, "hinge.csv");
    assert_int_equal(csv_rows(p, 0, NULL), 11); /* every 10 ms */

    r = RUN("run", g_mix, "--method", "dem", "--dt", "1e-4", "--duration", "0.05", "--out", split, "--quiet");
    expect_status(&r, 0, "run --method dem, first half");
    run_result_free(&r);
    r = RUN("run", "--resume", split, "--duration", "0.1", "--quiet");
    expect_status(&r, 0, "resume the DEM run");
    run_result_free(&r);
    static const char* const csvs[] = {"ball_position.csv", "box_velocity.csv", "hinge.csv", "solver.csv"};
    for (int i = 0; i < 4; i++) {
        path_in(p, sizeof p, straight, csvs[i]);
        path_in(pb, sizeof pb, split, csvs[i]);
        assert_same_csv(p, pb);
    }
    path_in(p, sizeof p, straight, "checkpoint/state-000000001000.bin");
    path_in(pb, sizeof pb, split, "checkpoint/state-000000001000.bin");
    assert_same_file(p, pb);

    size_t n = 0;
    char* blob = test_read_text(p, &n);
    assert_non_null(blob);
    dvi_scene* scene = NULL;
    assert_int_equal(dvi_scene_load(g_mix, &scene, NULL), DVI_OK);
    dvi_model* dvi = NULL;
    assert_int_equal(dvi_model_create(scene, &dvi, NULL, 0), DVI_OK);
    char msg[256];
    assert_int_equal(dvi_model_load_state(dvi, blob, n, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    expect_contains(msg, "method or DEM settings", "DEM state into a DVI model");
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.method = "dem";
    o.dt = 1e-4;
    assert_int_equal(dvi_scene_apply_overrides(scene, &o, NULL), DVI_OK);
    dvi_model* dem = NULL;
    assert_int_equal(dvi_model_create(scene, &dem, NULL, 0), DVI_OK);
    assert_int_equal(dvi_model_load_state(dem, blob, n, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_step_count(dem), 1000);
    for (int k = 0; k < 25; k++) assert_true(dvi_model_step(dem) >= 0);
    dvi_model_destroy(dvi);
    dvi_model_destroy(dem);
    dvi_scene_destroy(scene);
    free(blob);

    /* a step far too long for the contacts: the guard ends the run (exit 1) */
    path_in(p, sizeof p, g_root, "dem_blowup");
    r = RUN("run", SRC_PATH("examples/scenes/sphere_stack_10_dem.json"), "--dt", "0.01", "--duration", "1",
            "--out", p, "--quiet");
    expect_status(&r, 1, "DEM run with dt 0.01");
    /* the body by the scene's name, and the speed that was compared */
    expect_contains(r.err, "DEM blow-up at sphere", "DEM run with dt 0.01");
    expect_contains(r.err, "surface speed", "DEM run with dt 0.01");
    expect_contains(r.err, "needs h <", "DEM run with dt 0.01");
    expect_contains(r.err, "world unchanged", "DEM run with dt 0.01");
    run_result_free(&r);
}

/* --contacts-every K: every contact of every K-th step in contacts.csv, the
 * bodies by the scene's names. On the ten-box stack at rest the ground's
 * four contacts with box0 carry the stack's 98.1 N along their normals, and
 * the normal forces of all contacts sum to 9.81 N × (1 + … + 10). A run
 * resumed halfway writes the same table as a straight one, also when the
 * interrupted run had written rows past its checkpoint. */
/* The times (first column) of a probe's CSV, at most max rows. */
static int csv_times(const char* path, double* t, int max)
{
    char* text = test_read_text(path, NULL);
    assert_non_null(text);
    int n = 0;
    for (char* line = strchr(text, '\n'); line && line[1] && n < max; line = strchr(line + 1, '\n'))
        t[n++] = strtod(line + 1, NULL);
    free(text);
    return n;
}

static int count_of(const char* text, const char* needle)
{
    int n = 0;
    for (const char* q = strstr(text, needle); q; q = strstr(q + 1, needle)) n++;
    return n;
}

/* Probes by time: a DVI run (1 ms) and a DEM run (0.1 ms) of the sliding
 * box with --probe-interval 0.01 write their rows at the same times, t =
 * 0.01 k to rounding (31 rows over 0.3 s); dvi plot overlays their box.x in
 * one SVG: one polyline per run, a legend naming the runs. */
static void test_probe_interval_overlay(void** state)
{
    (void)state;
    const char* scene = SRC_PATH("examples/scenes/sliding_box.json");
    char dir[700], dvi[800], dem[800], a[1024], b[1024], svg[1024];
    path_in(dir, sizeof dir, g_root, "overlay");
    path_in(dvi, sizeof dvi, dir, "dvi");
    path_in(dem, sizeof dem, dir, "dem");
    run_result r = RUN("run", scene, "--duration", "0.3", "--probe-interval", "0.01", "--out", dvi, "--quiet");
    expect_status(&r, 0, "run, DVI at 1 ms");
    run_result_free(&r);
    r = RUN("run", scene, "--method", "dem", "--dt", "1e-4", "--duration", "0.3", "--probe-interval", "0.01", "--out",
            dem, "--quiet");
    expect_status(&r, 0, "run, DEM at 0.1 ms");
    run_result_free(&r);
    path_in(a, sizeof a, dvi, "box.csv");
    path_in(b, sizeof b, dem, "box.csv");
    double ta[64], tb[64];
    assert_int_equal(csv_times(a, ta, 64), 31);
    assert_int_equal(csv_times(b, tb, 64), 31);
    for (int k = 0; k < 31; k++) {
        assert_near(ta[k], 0.01 * k, 1e-12);
        assert_near(tb[k], ta[k], 1e-12);
    }
    path_in(svg, sizeof svg, dir, "box_x.svg");
    r = RUN("plot", a, b, "--column", "box.x", "--out", svg);
    expect_status(&r, 0, "plot two runs");
    run_result_free(&r);
    char* text = test_read_text(svg, NULL);
    assert_non_null(text);
    assert_int_equal(count_of(text, "<polyline"), 2);
    assert_int_equal(count_of(text, "<g class=\"entry\">"), 2);
    expect_contains(text, "<title>dvi</title>", "the legend names the runs");
    expect_contains(text, "<title>dem</title>", "the legend names the runs");
    expect_contains(text, "<title>box.csv: box.x (2 runs)</title>", "the overlay's title");
    expect_contains(text, ">box.x [m]</text>", "the y axis names the column");
    free(text);
    /* --labels names them; a column missing from one run, or labels that do not match the files, are refused */
    r = RUN("plot", a, b, "--column", "box.x", "--labels", "DVI 1 ms,DEM 0.1 ms", "--out", svg);
    expect_status(&r, 0, "plot --labels");
    run_result_free(&r);
    text = test_read_text(svg, NULL);
    assert_non_null(text);
    expect_contains(text, "<title>DEM 0.1 ms</title>", "plot --labels");
    free(text);
    char c[1024];
    path_in(c, sizeof c, dem, "solver.csv");
    r = RUN("plot", a, c, "--column", "box.x", "--out", svg);
    expect_status(&r, 2, "plot a column one run lacks");
    expect_contains(r.err, "solver.csv: no column 'box.x'", "plot a column one run lacks");
    run_result_free(&r);
    r = RUN("plot", a, b, "--labels", "one", "--out", svg);
    expect_status(&r, 2, "plot --labels one for two files");
    expect_contains(r.err, "--labels: 1 label for 2 CSV files", "plot --labels");
    run_result_free(&r);
}

static void test_contacts_table(void** state)
{
    (void)state;
    char straight[700], split[700], p[1024], q[1024];
    path_in(straight, sizeof straight, g_root, "contacts_straight");
    path_in(split, sizeof split, g_root, "contacts_split");
    const char* stack = SRC_PATH("examples/scenes/box_stack_10.json");
    run_result r = RUN("run", stack, "--duration", "0.5", "--contacts-every", "20", "--out", straight, "--quiet");
    expect_status(&r, 0, "run --contacts-every");
    run_result_free(&r);
    path_in(p, sizeof p, straight, "contacts.csv");
    char* text = test_read_text(p, NULL);
    assert_non_null(text);
    assert_true(strncmp(text, "step,time [s],body_a,body_b,x [m],y [m],z [m],nx [1],ny [1],nz [1],gap [m],f_n [N],"
                              "f_t [N],fx [N],fy [N],fz [N]\n",
                        strlen("step,time [s],")) == 0);
    double ground = 0.0, all = 0.0;
    int rows = 0, last_step = 0;
    for (const char* line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        char a[64] = "", b[64] = "";
        int step = 0;
        double v[12];
        int got = sscanf(line, "%d,%lf,%63[^,],%63[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &step, &v[0], a,
                         b, &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]);
        assert_int_equal(got, 15);
        assert_int_equal(step % 20, 0);
        rows++;
        if (step > last_step) last_step = step, ground = all = 0.0;
        if (strcmp(a, "ground") == 0 && strcmp(b, "box0") == 0) ground += v[8];
        all += v[8];
    }
    free(text);
    assert_int_equal(last_step, 100);
    assert_true(rows >= 5 * 40); /* 40 contacts a step (4 a face), 5 samples */
    assert_near(ground, 98.1, 0.1);
    assert_near(all, 9.81 * 55, 0.5);

    r = RUN("run", stack, "--duration", "0.25", "--contacts-every", "20", "--out", split, "--quiet");
    expect_status(&r, 0, "first half with --contacts-every");
    run_result_free(&r);
    /* rows a killed run wrote after its checkpoint (step 50) are cut on resume */
    path_in(q, sizeof q, split, "contacts.csv");
    FILE* f = fopen(q, "a");
    assert_non_null(f);
    fputs("60,0.3,ground,box0,0,0,0,0,0,1,0,1,0,0,0,1\n", f);
    fclose(f);
    r = RUN("run", "--resume", split, "--duration", "0.5", "--quiet");
    expect_status(&r, 0, "resume with --contacts-every");
    run_result_free(&r);
    char* ta = test_read_text(p, NULL);
    char* tb = test_read_text(q, NULL);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

/* ---- interrupt ------------------------------------------------------------------------------ */

/* Waits until the file holds a line starting with "step " (a progress line). */
static bool wait_for_progress(const char* path, pid_t pid, double seconds)
{
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (double waited = 0; waited < seconds; waited += 0.005) {
        char* t = test_read_text(path, NULL);
        bool seen = t && strstr(t, "\nstep ") != NULL;
        free(t);
        if (seen) return true;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return false; /* ended already */
        nanosleep(&pause, NULL);
    }
    return false;
}

static void test_interrupt_and_resume(void** state)
{
    (void)state;
    char out[700], straight[700];
    path_in(out, sizeof out, g_root, "interrupted");
    path_in(straight, sizeof straight, g_root, "interrupted_straight");
    /* 1000 s = 10^6 steps: far longer than the test waits */
    char sout[600], serr[600];
    pid_t pid = spawn_tool((const char* const[]){"run", g_mix, "--out", out, "--duration", "1000", "--log-every", "20",
                                                 NULL},
                           NULL, sout, serr, sizeof sout);
    bool started = wait_for_progress(serr, pid, 60);
    if (!started) {
        kill(pid, SIGKILL);
        wait_status(pid);
        print_error("the run did not report progress\n");
        fail();
    }
    assert_int_equal(kill(pid, SIGINT), 0);
    int status = wait_status(pid);
    if (status != 130) {
        char* e = test_read_text(serr, NULL);
        print_error("interrupted run: exit status %d, expected 130; stderr:\n%s\n", status, e ? e : "");
        free(e);
        fail();
    }
    char* e = test_read_text(serr, NULL);
    expect_contains(e, "--resume", "interrupted run's message");
    free(e);

    char p[1024];
    path_in(p, sizeof p, out, "summary.json");
    cJSON* s = read_json(p);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "interrupted")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "status")->valuestring, "interrupted");
    long steps = (long)json_number(s, "steps");
    cJSON_Delete(s);
    assert_true(steps >= 20 && steps < 1000000);
    path_in(p, sizeof p, out, "ball_position.csv");
    assert_int_equal(csv_rows(p, 4, NULL), steps + 1);
    path_in(p, sizeof p, out, "hinge.csv");
    assert_int_equal(csv_rows(p, 0, NULL), steps / 10 + 1);
    assert_exists(out, "ball_position.svg");
    char blob[64];
    snprintf(blob, sizeof blob, "checkpoint/state-%012ld.bin", steps);
    assert_exists(out, blob);

    /* SIGTERM, and SIGHUP (the terminal closed), are handled the same way */
    const int sigs[2] = {SIGTERM, SIGHUP};
    for (int k = 0; k < 2; k++) {
        char out_term[700];
        path_in(out_term, sizeof out_term, g_root, k ? "hung_up" : "terminated");
        pid = spawn_tool((const char* const[]){"run", g_mix, "--out", out_term, "--duration", "1000", "--log-every",
                                               "20", NULL},
                         NULL, sout, serr, sizeof sout);
        if (!wait_for_progress(serr, pid, 60)) {
            kill(pid, SIGKILL);
            wait_status(pid);
            print_error("the run did not report progress\n");
            fail();
        }
        assert_int_equal(kill(pid, sigs[k]), 0);
        assert_int_equal(wait_status(pid), 130);
        path_in(p, sizeof p, out_term, "summary.json");
        s = read_json(p);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "interrupted")));
        cJSON_Delete(s);
        path_in(p, sizeof p, out_term, "checkpoint/run.json");
        assert_true(access(p, R_OK) == 0);
    }

    /* finish 57 steps later, and compare with a run that went there directly */
    long end = steps + 57;
    char duration[64];
    snprintf(duration, sizeof duration, "%.17g", (double)end * 0.001);
    run_result r = RUN("run", "--resume", out, "--duration", duration, "--quiet");
    expect_status(&r, 0, "resume after the interrupt");
    run_result_free(&r);
    r = RUN("run", g_mix, "--out", straight, "--duration", duration, "--quiet");
    expect_status(&r, 0, "straight run to the same end");
    run_result_free(&r);
    snprintf(blob, sizeof blob, "state-%012ld.bin", end);
    compare_runs(straight, out, blob);
    path_in(p, sizeof p, out, "summary.json");
    s = read_json(p);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "interrupted")));
    assert_int_equal((long)json_number(s, "steps"), end);
    cJSON_Delete(s);
}

/* A file reaching the file-size limit (ulimit -f 40: 40 KiB; the ball's
 * position file, a row a step, crosses it near step 1,500) stops the run
 * as SIGTERM does: exit 130, summary.json "interrupted", the checkpoint
 * written, a message naming the file (the process died of SIGXFSZ, 153,
 * with "running" in summary.json). */
static void test_file_size_limit(void** state)
{
    (void)state;
    char out[700], p[1024];
    path_in(out, sizeof out, g_root, "size_limited");
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 40 * 1024;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0); /* the child inherits it */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    run_result r = RUN("run", g_mix, "--out", out, "--duration", "1000", "--quiet");
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    expect_status(&r, 130, "run past the file-size limit");
    expect_contains(r.err, "file-size limit", "its message");
    expect_contains(r.err, ".csv: cannot write", "its message (the file that reached the limit)");
    expect_contains(r.err, "--resume", "its message");
    run_result_free(&r);
    path_in(p, sizeof p, out, "summary.json");
    cJSON* s = read_json(p);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "status")->valuestring, "interrupted");
    const long steps = (long)json_number(s, "steps");
    cJSON_Delete(s);
    assert_true(steps > 100 && steps < 1000000);
    char blob[64];
    snprintf(blob, sizeof blob, "checkpoint/state-%012ld.bin", steps);
    assert_exists(out, blob);
    assert_exists(out, "checkpoint/run.json");
}

/* --strict fails the run (exit 1) when the health monitor raised a warning
 * (a ball started 0.05 m into the ground), after writing the final
 * checkpoint, so that the run can be inspected or resumed. */
static void test_strict_checkpoint(void** state)
{
    (void)state;
    char scene[700], out[700];
    path_in(scene, sizeof scene, g_root, "sunk.json");
    path_in(out, sizeof out, g_root, "strict_out");
    test_write_text(scene, "{\"name\": \"sunk\", \"units\": \"SI\", \"gravity\": [0, 0, -9.81],\n"
                           " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
                           "  {\"name\": \"ball\", \"type\": \"dynamic\", \"mass\": 1.0, \"position\": [0, 0, 0.05],\n"
                           "   \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]}],\n"
                           " \"formulation\": {\"dt\": 0.001}, \"duration\": 0.01}\n");
    run_result r = RUN("run", scene, "--out", out, "--strict", "--quiet");
    expect_status(&r, 1, "run --strict with a health warning");
    expect_contains(r.err, "--strict", "its message");
    run_result_free(&r);
    assert_exists(out, "checkpoint/run.json");
    assert_exists(out, "checkpoint/state-000000000010.bin");
    char p[1024];
    path_in(p, sizeof p, out, "summary.json");
    cJSON* s = read_json(p);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s, "status")->valuestring, "failed");
    cJSON_Delete(s);
}

/* A run killed outright (SIGKILL: no chance to write anything) continues
 * from its last periodic checkpoint: the rows written after it are cut off
 * and written again, identically. */
static void test_kill_and_resume(void** state)
{
    (void)state;
    char out[700], straight[700], run_json[800];
    path_in(out, sizeof out, g_root, "killed");
    path_in(straight, sizeof straight, g_root, "killed_straight");
    path_in(run_json, sizeof run_json, out, "checkpoint/run.json");
    char sout[600], serr[600];
    pid_t pid = spawn_tool((const char* const[]){"run", g_mix, "--out", out, "--duration", "1000", "--checkpoint-every",
                                                 "40", "--quiet", NULL},
                           NULL, sout, serr, sizeof sout);
    /* wait for the second checkpoint, so that rows after the first exist */
    struct timespec pause = {0, 5 * 1000 * 1000};
    long saved = 0;
    for (int i = 0; i < 12000 && saved < 80; i++) {
        nanosleep(&pause, NULL);
        char* t = test_read_text(run_json, NULL);
        cJSON* j = t ? cJSON_Parse(t) : NULL;
        const cJSON* st = j ? cJSON_GetObjectItemCaseSensitive(j, "step") : NULL;
        if (cJSON_IsNumber(st)) saved = (long)st->valuedouble;
        cJSON_Delete(j);
        free(t);
    }
    kill(pid, SIGKILL);
    assert_int_equal(wait_status(pid), 128 + SIGKILL);
    assert_true(saved >= 80);

    /* end a little after the last checkpoint on disk (it may be newer than `saved`) */
    cJSON* j = read_json(run_json);
    long step = (long)json_number(j, "step");
    cJSON_Delete(j);
    assert_true(step >= saved && step % 40 == 0);
    long end = step + 33;
    char duration[64];
    snprintf(duration, sizeof duration, "%.17g", (double)end * 0.001);
    run_result r = RUN("run", "--resume", out, "--duration", duration, "--quiet");
    expect_status(&r, 0, "resume after SIGKILL");
    run_result_free(&r);
    r = RUN("run", g_mix, "--out", straight, "--duration", duration, "--quiet");
    expect_status(&r, 0, "straight run to the same end");
    run_result_free(&r);
    char blob[64];
    snprintf(blob, sizeof blob, "state-%012ld.bin", end);
    compare_runs(straight, out, blob);
}

/* ---- solve ---------------------------------------------------------------------------------- */

/* Two spheres (radius 0.5, masses 1 and 2) stacked on the ground, one time
 * step h = 0.01 under gravity: two friction blocks; bottom contact at the
 * origin, the other at z = 1. The solution holds both spheres:
 * γ_ground = (m1 + m2) g h, γ_top = m2 g h, no friction. */
static void write_stack_problem(const char* path)
{
    const double g = 9.81, h = 0.01, m1 = 1.0, m2 = 2.0, R = 0.5;
    /* D: 12 × 6, body 0 rows 0..5, body 1 rows 6..11; columns n, t1, t2 per contact */
    /* contact 0: ground (fixed, not a body) – body 0 at its bottom, lever (0,0,-R)
       contact 1: body 0 (a) – body 1 (b) at z = 1: levers (0,0,R) for a, (0,0,-R) for b */
    static int32_t colptr[7];
    static int32_t rowind[32];
    static double values[32];
    int k = 0, c = 0;
    /* t1 = x, t2 = y; lever r × t: (0,0,l) × x = (0, l, 0); (0,0,l) × y = (-l, 0, 0) */
    const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
    for (int contact = 0; contact < 2; contact++) {
        for (int d = 0; d < 3; d++) {
            colptr[c++] = k;
            const double* t = dirs[d];
            int nbody = contact == 0 ? 1 : 2;
            for (int bi = 0; bi < nbody; bi++) {
                int body = contact == 0 ? 0 : bi;            /* contact 1: body 0 is a, body 1 is b */
                double sign = (contact == 1 && bi == 0) ? -1 : 1; /* on a: minus */
                double lever = contact == 0 ? -R : (bi == 0 ? R : -R);
                double ang[3] = {-lever * t[1], lever * t[0], 0}; /* (0,0,l) × t */
                double lin[3] = {t[0], t[1], t[2]};
                for (int q = 0; q < 3; q++) {
                    if (lin[q] != 0) {
                        rowind[k] = 6 * body + q;
                        values[k++] = sign * lin[q];
                    }
                }
                for (int q = 0; q < 3; q++) {
                    if (ang[q] != 0) {
                        rowind[k] = 6 * body + 3 + q;
                        values[k++] = sign * ang[q];
                    }
                }
            }
        }
    }
    colptr[c] = k;
    dvi_csc D = {12, 6, colptr, rowind, values};
    static double inv_mass[72];
    memset(inv_mass, 0, sizeof inv_mass);
    const double masses[2] = {m1, m2};
    for (int b = 0; b < 2; b++) {
        double I = 0.4 * masses[b] * R * R;
        for (int q = 0; q < 3; q++) {
            inv_mass[36 * b + 7 * q] = 1 / masses[b];
            inv_mass[36 * b + 7 * (q + 3)] = 1 / I;
        }
    }
    dvi_ccp_block blocks[2] = {{DVI_BLOCK_FRICTION, 0.5, 0, 0}, {DVI_BLOCK_FRICTION, 0.5, 0, 0}};
    /* r = Dᵀ v_free, v_free = −g h z for both bodies: normal rows only */
    double r[6] = {-g * h, 0, 0, 0, 0, 0};
    double solution[6] = {(m1 + m2) * g * h, 0, 0, m2 * g * h, 0, 0};
    dvi_ccp_problem pr = dvi_ccp_problem_empty();
    pr.rows = 6;
    pr.block_count = 2;
    pr.blocks = blocks;
    pr.body_count = 2;
    pr.D = &D;
    pr.inv_mass = inv_mass;
    pr.r = r;
    char msg[256];
    assert_int_equal(dvi_ccp_validate(&pr, msg, sizeof msg), DVI_OK);
    dvi_status st = dvi_ccp_problem_write_json(&pr, NULL, solution, path, msg, sizeof msg);
    if (st != DVI_OK) {
        print_error("writing %s: %s\n", path, msg);
        fail();
    }
}

static void check_solve_output(const char* out, const char* file)
{
    static const char* const must[] = {"apgd", "pgs", "lemke"};
    for (int i = 0; i < 3; i++) {
        const char* line = strstr(out, "\n");
        bool found = false;
        while (line && *line) {
            line++;
            if (strncmp(line, must[i], strlen(must[i])) == 0 && line[strlen(must[i])] == ' ') {
                const char* nl = strchr(line, '\n');
                size_t len = nl ? (size_t)(nl - line) : strlen(line);
                char buf[512];
                snprintf(buf, sizeof buf, "%.*s", (int)len, line);
                if (!strstr(buf, "converged") || strstr(buf, "not")) {
                    print_error("%s: %s did not converge: %s\n", file, must[i], buf);
                    fail();
                }
                found = true;
                break;
            }
            line = strchr(line, '\n');
        }
        if (!found) {
            print_error("%s: no line for %s in:\n%s\n", file, must[i], out);
            fail();
        }
    }
}

static void test_solve(void** state)
{
    (void)state;
    char path[700];
    path_in(path, sizeof path, g_root, "stack2.json");
    write_stack_problem(path);
    run_result r = RUN("solve", path, "--all-solvers", "--tolerance", "1e-9");
    expect_status(&r, 0, "solve --all-solvers");
    check_solve_output(r.out, path);
    expect_contains(r.out, "CCP residual", "solve output");
    expect_contains(r.out, "|g-ref|/|ref|", "solve output (reference)");
    run_result_free(&r);

    r = RUN("solve", path, "--solver", "pgs", "--max-iterations", "50");
    expect_status(&r, 0, "solve --solver pgs");
    expect_contains(r.out, "pgs", "solve --solver pgs");
    assert_null(strstr(r.out, "apgd "));
    run_result_free(&r);

    r = RUN("solve", path, "--solver", "pgs", "--all-solvers");
    expect_status(&r, 2, "solve --solver with --all-solvers");
    run_result_free(&r);

    /* the block tolerance: printed with the tolerance; not > 0 is a usage error naming the option */
    r = RUN("solve", path, "--solver", "apgd", "--block-tolerance", "1e-6");
    expect_status(&r, 0, "solve --block-tolerance 1e-6");
    expect_contains(r.out, "tolerance 1e-08, block tolerance 1e-06", "solve --block-tolerance 1e-6");
    run_result_free(&r);
    r = RUN("solve", path, "--block-tolerance", "0");
    expect_status(&r, 2, "solve --block-tolerance 0");
    expect_contains(r.err, "--block-tolerance: must be > 0 (got 0)", "solve --block-tolerance 0");
    run_result_free(&r);

    r = RUN("solve", g_mix); /* a scene, not a CCP file */
    expect_status(&r, 2, "solve a scene file");
    expect_contains(r.err, g_mix, "solve a scene file");
    run_result_free(&r);

    /* a status is what the answer is: Lemke's least-squares answer to two
     * bilateral rows that disagree is not "converged" (its residual is
     * 0.707), and a nearly singular positive-definite pair is solved, never
     * "infeasible" */
    r = RUN("solve", SRC_PATH("tests/data/ccp/bilateral_disagree.json"), "--solver", "lemke");
    expect_status(&r, 0, "solve bilateral_disagree.json");
    expect_contains(r.out, "lemke    max_iterations           0     7.071e-01", "lemke on rows that disagree");
    run_result_free(&r);
    r = RUN("solve", SRC_PATH("tests/data/ccp/bilateral_near_singular.json"), "--all-solvers");
    expect_status(&r, 0, "solve bilateral_near_singular.json");
    if (strstr(r.out, "infeasible")) fail_msg("a solvable problem called infeasible:\n%s", r.out);
    expect_contains(r.out, "apgd     converged", "apgd on the nearly singular pair");
    expect_contains(r.out, "lemke    converged", "lemke on the nearly singular pair");
    run_result_free(&r);

    /* the sample problem of the repository, when present */
    const char* sample = SRC_PATH("tests/data/ccp/stack3.json");
    if (exists(sample)) {
        r = RUN("solve", sample, "--all-solvers");
        expect_status(&r, 0, "solve stack3.json");
        check_solve_output(r.out, sample);
        run_result_free(&r);
    }
}

/* Runs the tool and fails if it has not ended within `seconds` (killed
 * then): an input that blocks the tool is a hang, not a slow run. */
static run_result run_tool_bounded(const char* const* args, double seconds)
{
    char out[600], err[600];
    pid_t pid = spawn_tool(args, NULL, out, err, sizeof out);
    struct timespec pause = {0, 10 * 1000 * 1000};
    int st = 0;
    pid_t got = 0;
    for (double waited = 0; waited < seconds && (got = waitpid(pid, &st, WNOHANG)) == 0; waited += 0.01)
        nanosleep(&pause, NULL);
    if (got != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        print_error("dvi %s %s: still running after %g s (blocked on its input)\n", args[0], args[1], seconds);
        fail();
    }
    run_result r;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    r.out = test_read_text(out, NULL);
    r.err = test_read_text(err, NULL);
    if (!r.out) r.out = calloc(1, 1);
    if (!r.err) r.err = calloc(1, 1);
    return r;
}

/* A FIFO given where a file is read (no writer ever opens it): every
 * command refuses it at once, naming it, with a non-zero status; none
 * blocks waiting for a writer. */
static void test_fifo_inputs(void** state)
{
    (void)state;
    char fifo[700], csv[700], svg[700];
    path_in(fifo, sizeof fifo, g_root, "input.fifo");
    path_in(csv, sizeof csv, g_root, "fifo_good.csv");
    path_in(svg, sizeof svg, g_root, "fifo.svg");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    test_write_text(csv, "t [s],x [m]\n0,1\n1,2\n");
    const char* const cases[][5] = {
        {"solve", fifo, NULL},
        {"solve", fifo, "--all-solvers", NULL},
        {"plot", fifo, "--out", svg, NULL},
        {"plot", csv, fifo, "--out", svg}, /* an overlay whose second file is the FIFO */
        {"check", fifo, NULL},
        {"run", fifo, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char* args[6] = {0};
        for (int a = 0; a < 5 && cases[k][a]; a++) args[a] = cases[k][a];
        run_result r = run_tool_bounded(args, 20);
        if (r.status == 0) {
            print_error("dvi %s with a FIFO: exit status 0\n", args[0]);
            fail();
        }
        expect_contains(r.err, fifo, args[0]);
        expect_contains(r.err, "not a regular file (a FIFO)", args[0]);
        run_result_free(&r);
    }
    unlink(fifo);
}

/* dvi plot of a CSV holding a cell it cannot draw: exit status 1 and the
 * message names the file, line and column; no SVG is left. */
static void test_plot_bad_cells(void** state)
{
    (void)state;
    static const struct {
        const char* text;
        const char* where;
    } cases[] = {
        {"t [s],x [m]\n0,1\n1,1e308\n", ":3:2: '1e308' is beyond the range a plot draws"},
        {"t [s],x [m]\n0,0x10\n", ":2:2: '0x10' is a hexadecimal number"},
    };
    char csv[700], svg[700];
    path_in(csv, sizeof csv, g_root, "bad_cells.csv");
    path_in(svg, sizeof svg, g_root, "bad_cells.svg");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        test_write_text(csv, cases[k].text);
        unlink(svg);
        run_result r = run_tool_bounded((const char* const[]){"plot", csv, "--out", svg, NULL}, 20);
        expect_status(&r, 1, "plot of a bad cell");
        expect_contains(r.err, "bad_cells.csv", "plot of a bad cell");
        expect_contains(r.err, cases[k].where, "plot of a bad cell");
        assert_false(exists(svg));
        run_result_free(&r);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_help_lists),
        cmocka_unit_test(test_friction_law_key),
        cmocka_unit_test(test_solver_choice),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_run_outputs),
        cmocka_unit_test(test_not_converged),
        cmocka_unit_test(test_resume_round_trip),
        cmocka_unit_test(test_run_dem),
        cmocka_unit_test(test_probe_interval_overlay),
        cmocka_unit_test(test_contacts_table),
        cmocka_unit_test(test_interrupt_and_resume),
        cmocka_unit_test(test_file_size_limit),
        cmocka_unit_test(test_strict_checkpoint),
        cmocka_unit_test(test_kill_and_resume),
        cmocka_unit_test(test_solve),
        cmocka_unit_test(test_fifo_inputs),
        cmocka_unit_test(test_plot_bad_cells),
    };
    return cmocka_run_group_tests_name("cli", tests, group_setup, group_teardown);
}
