/* The `dvi` command: declarations shared by its source files (tool/dvi*.c).
 * Not installed; see docs/cli.md for the user's view. */
#ifndef DVI_TOOL_CLI_H
#define DVI_TOOL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses (docs/cli.md). */
enum {
    DVI_EXIT_OK = 0,
    DVI_EXIT_FAILED = 1,      /* the run failed at runtime: blow-up, I/O error */
    DVI_EXIT_USAGE = 2,       /* bad usage, invalid scene or problem file */
    DVI_EXIT_INTERRUPTED = 130 /* SIGINT / SIGTERM: outputs written, checkpoint saved */
};

/* ---- commands (one file each) ---------------------------------------------- */
/* argv[0] of the dvi process (dvi.c's main), for a command that runs dvi again (dvi study). */
extern const char* dvi_argv0;
int dvi_cmd_run(int argc, char** argv);
int dvi_cmd_check(int argc, char** argv);
int dvi_cmd_solve(int argc, char** argv);
int dvi_cmd_plot(int argc, char** argv);
int dvi_cmd_study(int argc, char** argv);
/* dvi check: checks the scene's "study" object (json_root: the file as cJSON)
 * as dvi study would, printing each problem on stderr as "SCENE: study.path:
 * message". Returns the number of problems; on none, `line` describes the
 * study ("" without a study object). */
struct dvi_scene;
struct dvi_model;
int dvi_study_check_scene(const char* scene_arg, const void* json_root, const struct dvi_scene* scene,
                          const struct dvi_model* model, char* line, size_t line_size);
/* Loads the scene file scene_arg and applies the command-line overrides
 * (NULL: none): the checks of the scene that `dvi run` makes at its start
 * and `dvi check` makes, the same function for both. dvi_scene_apply_overrides
 * checks the solver against the friction law and the blocks the scene's
 * contacts may give (a message naming the shapes and the solvers that take
 * them). Prints every problem on stderr as "SCENE: path: message", and the
 * scene's warnings as "SCENE: warning: path: message". Returns
 * -1 with *scene set, or an exit status (2: invalid, 1: out of memory; *scene
 * NULL) and the number of problems in *problems (may be NULL). */
struct dvi_scene_overrides;
int cli_load_scene(const char* scene_arg, const struct dvi_scene_overrides* overrides, struct dvi_scene** scene,
                   int* problems);
/* The scene's warnings (deprecated keys) on stderr, "SCENE: warning: ...". */
struct dvi_scene;
void cli_print_scene_warnings(const char* scene_arg, const struct dvi_scene* scene);
/* The solvers of the friction law ("ccp", "coulomb") as dvi run and dvi check
 * take them, from the registry: "apgd, pgs, jacobi, lemke" and "nsgs, newton,
 * desaxce, lemke --lemke-coulomb" (for the help texts). */
void cli_solver_list(const char* law, char* out, size_t size);
/* Prints the help of a command ("run", "check", "solve", "help"; NULL: the
 * overview) to stdout. Returns false for an unknown command. */
bool dvi_print_help(const char* command);

/* ---- option parsing -------------------------------------------------------- */
typedef struct cli_option {
    const char* name; /* long name without "--" */
    bool has_arg;
    int id;           /* > 0 */
} cli_option;

typedef struct cli_parser {
    int argc;
    char** argv;
    int index;          /* next argv element */
    const char* command; /* for messages: "run", "check", ... */
    bool only_positional; /* after "--" */
} cli_parser;

enum { CLI_END = 0, CLI_POSITIONAL = -1, CLI_ERROR = -2, CLI_HELP = -3 };

/* argv[0] is the command name; parsing starts at argv[1]. */
void cli_init(cli_parser* p, int argc, char** argv, const char* command);
/* Next option or argument: an option id (> 0, its value in *arg when it takes
 * one), CLI_POSITIONAL (*arg is the argument), CLI_HELP (-h / --help),
 * CLI_END, or CLI_ERROR (message printed). Options are "--name value" or
 * "--name=value"; "--" ends the options. */
int cli_next(cli_parser* p, const cli_option* options, const char** arg);
/* Prints "dvi CMD: message" and the hint to the command's help; returns
 * DVI_EXIT_USAGE. */
int cli_usage_error(const char* command, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Number parsing with a message naming the option on failure. */
bool cli_parse_double(const char* command, const char* option, const char* text, double* out);
bool cli_parse_int64(const char* command, const char* option, const char* text, int64_t min, int64_t max,
                     int64_t* out);

/* ---- small utilities (dvi_util.c) ------------------------------------------ */
/* Monotonic wall clock, seconds. */
double cli_now(void);
/* Reads a whole file (NUL-terminated, malloc'd). NULL on failure, message in msg. */
char* cli_read_file(const char* path, size_t* size, char* msg, size_t msg_size);
/* 64-bit FNV-1a of bytes, and as 16 hex digits into out[17]. */
uint64_t cli_hash64(const void* data, size_t size);
void cli_hash_hex(uint64_t h, char out[17]);
/* malloc'd "a/b" (b taken as is when absolute). */
char* cli_path_join(const char* a, const char* b);
/* malloc'd copy. */
char* cli_strdup(const char* s);
/* Removes the files of directory dir (not recursive) whose names satisfy
 * match(name, ctx). Best effort: errors are ignored. */
void cli_remove_matching(const char* dir, bool (*match)(const char* name, const void* ctx), const void* ctx);
/* Prints every line of `text` ("path: message\n" lines) on stderr as
 * "prefix: line" (as is when the line already starts with "prefix:"). */
void cli_print_prefixed_lines(const char* prefix, const char* text);
/* Number of steps of a run of `duration` s with step dt: duration/dt
 * rounded to the nearest integer when within 1e-9 (relative) of it, else
 * rounded up. */
int64_t cli_steps_for(double duration, double dt);
/* Formats a duration in seconds for humans ("2.5 s", "3 min 12 s", "1 h 05 min"). */
void cli_format_seconds(double s, char* out, size_t size);
/* A time per step: "0.371 ms", "167 ms", "1.67 s" (never an exponent below 1000 s). */
void cli_format_step_time(double s, char* out, size_t size);

#endif /* DVI_TOOL_CLI_H */
