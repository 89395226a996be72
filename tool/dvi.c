/* dvi — run scene files, check them, and solve CCP problem files.
 *
 *   dvi run SCENE [options]        simulate; CSV/SVG/VTK outputs, summary.json, checkpoints
 *   dvi run --resume DIR           continue a run from its checkpoint
 *   dvi check SCENE                validate a scene and print what it holds
 *   dvi solve PROBLEM              solve one CCP (JSON or FCLIB) with one or all solvers
 *   dvi plot CSV...                draw (again) the SVG plot of a probe's CSV, or overlay runs
 *
 * docs/cli.md is the manual; the help texts below are its short form. Their
 * lists of solvers are made from the registry when printed (print_text:
 * {solvers:ccp}, {solvers:coulomb}, {solvers:coulomb-run},
 * {solvers:coulomb-no-rolling}). */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#include "data_path.h"
#include "dvi_cli.h"
#include "../src/base/regular_file.h"
#include "rover_probes.h"

#include <dvi/dvi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char overview_help[] =
    "Usage: dvi COMMAND [ARGS]\n"
    "\n"
    "Nonsmooth rigid multibody dynamics with frictional contact (dvicontact).\n"
    "\n"
    "Commands:\n"
    "  run SCENE [options]     simulate a scene file; writes CSV time series, SVG plots,\n"
    "                          summary.json, checkpoints (and VTK frames) into a directory\n"
    "  run --resume DIR        continue an interrupted or finished run from DIR/checkpoint\n"
    "  check SCENE             validate a scene file and print a short summary\n"
    "  solve PROBLEM           solve a CCP problem file (JSON or FCLIB) with one or all solvers\n"
    "  plot CSV [options]      draw (again) the SVG plot of a probe's CSV, with chosen columns\n"
    "  study SCENE [options]   run a scene over a ladder of steps per method (and DEM moduli),\n"
    "                          judge each run; table (CSV, JSON), plots, largest acceptable step\n"
    "  help [COMMAND]          this text, or the help of COMMAND\n"
    "\n"
    "Solvers (run --solver NAME): {solvers:ccp} for the cone complementarity\n"
    "problem (the default law); {solvers:coulomb-run} for Coulomb's law\n"
    "(--friction coulomb). dvi check SCENE --solver NAME ... checks a choice.\n"
    "\n"
    "Options:\n"
    "  -h, --help              show this help (also: dvi COMMAND --help)\n"
    "  --version               print the version\n"
    "\n"
    "Exit status: 0 success; 1 the run failed at runtime (numerical blow-up, I/O error);\n"
    "2 bad usage, invalid scene or problem file; 130 interrupted (SIGINT/SIGTERM/SIGHUP), after\n"
    "writing valid outputs and a checkpoint.\n";

static const char run_help[] =
    "Usage: dvi run SCENE [options]\n"
    "       dvi run --resume DIR [--duration T] [--threads N] [--checkpoint-every N]\n"
    "                            [--log-every N] [--quiet]\n"
    "\n"
    "Simulates the scene file SCENE from t = 0 to its duration and writes into DIR:\n"
    "  NAME.csv, NAME.svg      one CSV time series and one plot per probe of the scene\n"
    "                          (first row at t = 0, then one row every `every` steps,\n"
    "                          or every `interval` s)\n"
    "  summary.json            settings, steps, timings, solver statistics, warnings\n"
    "  checkpoint/             run.json + state-STEP.bin: what --resume continues from\n"
    "  contacts.csv            every contact of every K-th step (with --contacts-every K)\n"
    "  vtk/                    bodies.pvd, shapes.pvd, contacts.pvd, static.vtp and\n"
    "                          frames/*.vtp (with --vtk-every)\n"
    "\n"
    "Options:\n"
    "  --out DIR               output directory (default: out/NAME, NAME = the scene's name,\n"
    "                          else the file name without its extension)\n"
    "  --dt H                  time step in s (overrides the scene's)\n"
    "  --duration T            simulated time in s from t = 0 (overrides the scene's;\n"
    "                          with --resume: the new end time, to extend a run)\n"
    "  --solver NAME           solver of the DVI step: {solvers:ccp} (the CCP);\n"
    "                          {solvers:coulomb-run} (Coulomb's law)\n"
    "  --method dvi|dem        formulation\n"
    "  --friction ccp|coulomb  friction law of the DVI step (the solver must solve it and take\n"
    "                          the scene's blocks: dvi check SCENE with the same options tells)\n"
    "  --lemke-coulomb         lemke solves Coulomb's law (the scene's formulation.lemke.coulomb)\n"
    "  --young-modulus E       Young's modulus in Pa of every material of the scene (DEM)\n"
    "  --probe-interval T      every probe samples by time, at the step nearest each\n"
    "                          multiple of T s, instead of by its `every`: the same\n"
    "                          times at any step\n"
    "  --threads N             threads of the step: collision, assembly, solver (N >= 1;\n"
    "                          the results do not depend on it)\n"
    "  --vtk-every K           VTK frame at t = 0 and every K steps (ParaView: vtk/bodies.pvd)\n"
    "  --vtk-ascii             VTK arrays as text (default: binary, exact, zlib-compressed)\n"
    "  --contacts-every K      every contact of every K-th step in contacts.csv (bodies,\n"
    "                          point, normal, gap, normal and friction force)\n"
    "  --checkpoint-every N    checkpoint (and re-plot the SVGs) every N steps; a final\n"
    "                          checkpoint is always written at the end and on interrupt\n"
    "  --checkpoint-minutes M  also checkpoint after M minutes of wall time since the last\n"
    "                          (default 10; 0: none), so that a killed run loses little\n"
    "  --log-every N           when stderr is not a terminal: one progress line every N\n"
    "                          steps (default: about 100 lines per run)\n"
    "  --quiet                 no progress output (errors are still printed)\n"
    "  --strict                exit 1 when the health monitor raised a warning (summary.json,\n"
    "                          \"health\"); the outputs are written all the same\n"
    "  --resume DIR            continue the run in DIR from DIR/checkpoint (same scene file,\n"
    "                          same overrides); the result is bit-identical to a run that\n"
    "                          was never interrupted\n"
    "\n"
    "On a terminal a progress line is rewritten in place. Ctrl-C (SIGINT), SIGTERM or SIGHUP stops\n"
    "after the current step, writes the outputs and a checkpoint, and exits with 130; a\n"
    "second Ctrl-C aborts at once.\n"
    "\n"
    "Exit status: 0 done; 1 failed at runtime (error or non-finite state in a step, I/O\n"
    "error; outputs up to the failure are written); 2 bad usage or invalid scene; 130\n"
    "interrupted.\n"
    "\n"
    "Over MPI ranks (a build with MPI): mpirun -n N dvi run SCENE spreads the scene's\n"
    "granular beds over N ranks with the same final state as one process; rank 0 writes\n"
    "the same outputs (VTK frames as .pvtp sets of one piece per rank). Its checkpoint\n"
    "resumes on any number of ranks (mpirun -n M dvi run --resume DIR, or without\n"
    "mpirun). Not over ranks: --contacts-every, --strict (docs/scale.md).\n";

static const char check_help[] =
    "Usage: dvi check SCENE [--solver NAME] [--method dvi|dem] [--friction ccp|coulomb]\n"
    "                 [--lemke-coulomb]\n"
    "\n"
    "Reads and validates the scene file SCENE, builds its model, and prints a short\n"
    "summary: bodies, shapes, joints, generators, probes and the run settings.\n"
    "With the options, checks the scene as dvi run with them would at its start:\n"
    "whether the solver solves the friction law and takes the blocks of the scene's\n"
    "contacts; a refusal names the solvers that do. Under Coulomb's law\n"
    "{solvers:coulomb-no-rolling} take no rolling or spinning friction.\n"
    "\n"
    "Options:\n"
    "  --solver NAME           {solvers:ccp} (the CCP);\n"
    "                          {solvers:coulomb-run} (Coulomb's law)\n"
    "  --method dvi|dem        formulation\n"
    "  --friction ccp|coulomb  friction law of the DVI step\n"
    "  --lemke-coulomb         lemke solves Coulomb's law\n"
    "\n"
    "Exit status: 0 valid; 2 invalid (every problem is printed on stderr, one per line,\n"
    "as \"SCENE: path: message\") or bad usage.\n";

static const char solve_help[] =
    "Usage: dvi solve PROBLEM [--solver NAME | --all-solvers] [--tolerance X]\n"
    "                 [--block-tolerance X] [--max-iterations K] [--threads N]\n"
    "                 [--warm-start] [--delassus] [--json]\n"
    "\n"
    "Reads a CCP problem file — JSON (docs/ccp-file.md) or FCLIB HDF5, local or\n"
    "global (docs/fclib.md) — and solves it. Prints one line per solver:\n"
    "iterations, CCP residual, Coulomb residual, wall time and status, and, when the\n"
    "file holds a reference solution, the relative difference ||gamma - ref|| / ||ref||.\n"
    "\n"
    "Options:\n"
    "  --solver NAME           {solvers:ccp} (the CCP; default apgd);\n"
    "                          {solvers:coulomb} (Coulomb's law)\n"
    "  --all-solvers           every solver, one after the other\n"
    "  --tolerance X           on the CCP residual; on the Coulomb residual for the solvers\n"
    "                          of Coulomb's law (default: the solver default, 1e-8)\n"
    "  --block-tolerance X     on every block's own residual, in its own scale (default:\n"
    "                          the solver default, 1e-4)\n"
    "  --max-iterations K      iterations / sweeps / pivots at most (default 1000)\n"
    "  --threads N             threads for the matrix-free products (default 1)\n"
    "  --warm-start            start from the file's initial guess gamma0 (default: zero)\n"
    "  --delassus              FCLIB global problems: form W = H M^-1 H^T with CHOLMOD even\n"
    "                          when M is block-diagonal\n"
    "  --json                  instead of the description and the table, one JSON object a\n"
    "                          line per solver: solver, status, iterations, residual,\n"
    "                          residual_coulomb (17 significant digits), seconds\n"
    "\n"
    "Exit status: 0 every solver ran (converged or not: see the status column); 1 a\n"
    "solver failed with an error; 2 bad usage or invalid problem file.\n";

static const char plot_help[] =
    "Usage: dvi plot CSV... [--out FILE] [--columns A,B,...] [--labels L1,L2,...]\n"
    "                [--log | --linear] [--title T] [--width PX]\n"
    "\n"
    "Draws the SVG plot of a CSV file whose first column is x (time) and whose\n"
    "header cells read \"name [unit]\", as dvi run writes its probes, so that a long\n"
    "run can be replotted without being run again: one panel per unit, series told\n"
    "apart by colour and dash pattern, and a logarithmic axis where a panel's\n"
    "positive values span three decades or more (a residual). With several CSV\n"
    "files (runs of one scene), their columns are overlaid: one line per run, the\n"
    "legend naming the runs.\n"
    "\n"
    "Options:\n"
    "  --out FILE              the SVG (default: the CSV's name with .svg; several:\n"
    "                          the first one's name with _overlay.svg, here)\n"
    "  --columns A,B,...       these columns only (names as in the header, without units);\n"
    "                          --column A too\n"
    "  --labels L1,L2,...      the runs' names in the legend (default: the parts of the\n"
    "                          paths that differ: out/a/box.csv, out/b/box.csv -> a, b)\n"
    "  --log                   a logarithmic axis on every panel with a positive value\n"
    "  --linear                linear axes everywhere\n"
    "  --title T               the title (default: the file's name)\n"
    "  --width PX              the picture's width (default 900)\n"
    "\n"
    "Exit status: 0 drawn (the SVG's path is printed); 1 a CSV cannot be read or the\n"
    "SVG written; 2 bad usage or a column a CSV does not have.\n";

static const char study_help[] =
    "Usage: dvi study SCENE [options]\n"
    "\n"
    "Runs SCENE over a ladder of steps for each method (DVI; DEM at each Young's modulus),\n"
    "one `dvi run` per step in DIR/runs/ (one per core at a time), judges each run and\n"
    "writes DIR/study.csv, DIR/study.json (one object per run, and the largest acceptable\n"
    "step of each method with its cost) and DIR/study.svg (error against wall time per\n"
    "simulated second; overlap against the step). Settings come from the scene's \"study\"\n"
    "object (docs/study.md); these options override them:\n"
    "\n"
    "Options:\n"
    "  --methods LIST          dvi,dem (default: both)\n"
    "  --dts-dvi LIST          the DVI ladder of steps in s, e.g. 1e-3,2e-3,4e-3 (default:\n"
    "                          the scene's step x 2^k, while the runs are acceptable)\n"
    "  --dts-dem LIST          the DEM ladder of steps in s (default: the stiffest contact's\n"
    "                          critical step and its halves); the ladders are printed\n"
    "  --young-moduli LIST     DEM: Young's moduli in Pa (default: the scene's materials)\n"
    "  --duration T            simulated time of every run (default: the scene's)\n"
    "  --observable P.C        the column C of probe P (e.g. bin_load.bin.f_dir) ...\n"
    "  --at T                  ... at time T (the nearest sample; default: the end) or\n"
    "  --window T0,T1          ... its mean over [T0, T1]\n"
    "  --rtol X | --atol X     tolerance on the observable against the finest stable run of\n"
    "                          the same method and modulus (default: relative 0.02)\n"
    "  --overlap F             largest penetration (DEM: overlap) below F times the smallest\n"
    "                          shape's size (radius, half-extent; default 0.01)\n"
    "  --probe-interval T      probes sample every T s in every run (default: duration/300)\n"
    "  --solver NAME           the DVI runs' solver (default: the scene's)\n"
    "  --jobs N                runs at a time (default: the number of cores)\n"
    "  --threads N             threads of each run (default 1)\n"
    "  --out DIR               default out/NAME_study\n"
    "  --resume                skip the runs of DIR/runs that finished with the same settings;\n"
    "                          continue the interrupted ones from their checkpoints (a run\n"
    "                          without a readable summary or checkpoint: afresh)\n"
    "  --quiet                 no progress lines on stderr\n"
    "\n"
    "A run is acceptable when it finished without a health finding other than penetration,\n"
    "its penetration is below the overlap limit, and its observable is within the tolerance.\n"
    "The largest acceptable step of a ladder is the largest step whose run and every run of a\n"
    "smaller step are acceptable.\n"
    "\n"
    "Exit status: 0 done (whatever the runs' verdicts); 1 a table could not be written;\n"
    "2 bad usage or settings (each problem named: study.dts.dem[2]: must be > 0);\n"
    "130 interrupted (continue with --resume).\n";

static const char help_help[] =
    "Usage: dvi help [COMMAND]\n"
    "\n"
    "Prints the overview, or the help of COMMAND (run, check, solve, plot, study).\n";

/* The overview's last part: where the example scenes, the scene schema and
 * the manual are (data_path.h: the build tree's data/ or an installed
 * share/dvicontact, found relative to this program). */
static void print_files(FILE* out)
{
    char dir[4096];
    fputs("\nFiles:\n", out);
    if (data_path_dir(dir, sizeof dir) != 0) {
        fprintf(out, "  %s\n", dir);
        fputs("  the manual: docs/cli.md of the source tree\n", out);
        return;
    }
    fprintf(out, "  example scenes   %s/scenes   (try: dvi run %s/scenes/pendulum.json)\n", dir, dir);
    fprintf(out, "  scene schema     %s/scene.schema.json\n", dir);
    char doc[4200];
    snprintf(doc, sizeof doc, "%s/../doc/dvicontact/cli.md", dir);
    char why[160];
    FILE* f = base_open_regular(doc, 0, NULL, why, sizeof why);
    if (f) {
        fclose(f);
        snprintf(doc, sizeof doc, "%s/../doc/dvicontact", dir);
        char real[4096];
        char* shown = realpath(doc, real);
        fprintf(out, "  the manual       %s/cli.md (all guides in that directory)\n", shown ? shown : doc);
    } else {
        fputs("  the manual       docs/cli.md of the source tree\n", out);
    }
}

/* The solvers of a law, from the registry: "ccp" and "coulomb" their own
 * (dvi_solver_law), "coulomb-run" as dvi run takes them (with
 * --lemke-coulomb), "coulomb-no-rolling" those of Coulomb's law that refuse
 * rolling and spinning friction (dvi_solver_supports). */
static void solvers_of(const char* which, char* out, size_t size)
{
    if (strcmp(which, "coulomb-run") == 0) {
        cli_solver_list("coulomb", out, size);
        return;
    }
    const bool no_rolling = strcmp(which, "coulomb-no-rolling") == 0;
    const dvi_friction_law law = no_rolling || strcmp(which, "coulomb") == 0 ? DVI_LAW_COULOMB : DVI_LAW_CCP;
    size_t n = 0;
    out[0] = '\0';
    for (int32_t i = 0; i < dvi_solver_count() && n < size; i++)
        if (dvi_solver_law(i) == law && (!no_rolling || !dvi_solver_supports(i, law, DVI_BLOCK_FRICTION_ROLLING))) {
            int w = snprintf(out + n, size - n, "%s%s", n ? ", " : "", dvi_solver_name(i));
            if (w < 0) break;
            n += (size_t)w;
        }
}

/* A help text with its {solvers:LAW} replaced by the registry's lists. */
static void print_text(FILE* out, const char* text)
{
    static const char token[] = "{solvers:";
    const char* p = text;
    const char* t;
    while ((t = strstr(p, token)) != NULL) {
        const char* end = strchr(t, '}');
        if (!end) break;
        fwrite(p, 1, (size_t)(t - p), out);
        char which[32], list[256];
        snprintf(which, sizeof which, "%.*s", (int)(end - t - (sizeof token - 1)), t + sizeof token - 1);
        solvers_of(which, list, sizeof list);
        fputs(list, out);
        p = end + 1;
    }
    fputs(p, out);
}

bool dvi_print_help(const char* command)
{
    const char* text = NULL;
    if (!command) {
        print_text(stdout, overview_help);
        print_files(stdout);
        return true;
    } else if (strcmp(command, "run") == 0)
        text = run_help;
    else if (strcmp(command, "check") == 0)
        text = check_help;
    else if (strcmp(command, "solve") == 0)
        text = solve_help;
    else if (strcmp(command, "plot") == 0)
        text = plot_help;
    else if (strcmp(command, "study") == 0)
        text = study_help;
    else if (strcmp(command, "help") == 0)
        text = help_help;
    if (!text) return false;
    print_text(stdout, text);
    return true;
}

static int print_version(void)
{
    printf("dvi %s (dvicontact library %s)\n", DVI_VERSION_STRING, dvi_version_string());
    return DVI_EXIT_OK;
}

static int cmd_help(int argc, char** argv)
{
    if (argc > 3) return cli_usage_error("help", "too many arguments");
    if (argc == 3 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
        dvi_print_help("help");
        return DVI_EXIT_OK;
    }
    if (!dvi_print_help(argc == 3 ? argv[2] : NULL))
        return cli_usage_error("help", "unknown command '%s' (commands: run, check, solve, plot, study, help)", argv[2]);
    return DVI_EXIT_OK;
}

const char* dvi_argv0 = "dvi";

int main(int argc, char** argv)
{
    /* the rover study's probe kinds, for the rover scenes (tool/meson.build) */
    if (rover_register_probes() != DVI_OK) {
        fprintf(stderr, "dvi: %s\n", dvi_error_message());
        return 1;
    }
    if (argc > 0 && argv[0] && argv[0][0]) dvi_argv0 = argv[0];
    if (argc < 2) {
        print_text(stderr, overview_help);
        print_files(stderr);
        return DVI_EXIT_USAGE;
    }
    const char* cmd = argv[1];
    /* each command parses argv[1..]: argv[1] (the command) plays argv[0] */
    if (strcmp(cmd, "run") == 0) return dvi_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return dvi_cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "solve") == 0) return dvi_cmd_solve(argc - 1, argv + 1);
    if (strcmp(cmd, "plot") == 0) return dvi_cmd_plot(argc - 1, argv + 1);
    if (strcmp(cmd, "study") == 0) return dvi_cmd_study(argc - 1, argv + 1);
    if (strcmp(cmd, "help") == 0) return cmd_help(argc, argv);
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        if (argc > 2) return cli_usage_error(NULL, "unexpected argument '%s' after %s", argv[2], cmd);
        dvi_print_help(NULL);
        return DVI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        if (argc > 2) return cli_usage_error(NULL, "unexpected argument '%s' after %s", argv[2], cmd);
        return print_version();
    }
    if (cmd[0] == '-') return cli_usage_error(NULL, "unknown option '%s'", cmd);
    return cli_usage_error(NULL, "unknown command '%s' (commands: run, check, solve, plot, study, help)", cmd);
}
