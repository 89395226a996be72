/* bench_cli — the command-line parsing the benchmarks share: whole numbers
 * and numbers with a range, lists of whole numbers (sizes, thread counts),
 * lists of names, the --solvers option. Every parser that takes a program
 * name prints its own error, naming the program and the option:
 *
 *   bench_x: --threads: expected an integer >= 0, got 'two'
 *
 * and returns false; the caller then exits with status 2. Also the one
 * JSON number writer of the --json rows. Public API only (dvi/ccp.h for
 * the solver names). */
#ifndef BENCH_CLI_H
#define BENCH_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A whole number in [lo, hi] (the whole string, base 10). */
bool cli_parse_int(const char* s, int64_t lo, int64_t hi, int64_t* out);

/* The same, with an error "PROG: OPT: expected WHAT, got 'S'" on stderr. */
bool cli_int(const char* prog, const char* opt, const char* s, int64_t lo, int64_t hi, const char* what,
             int64_t* out);

/* A finite number (the whole string) with min < x (min_open) or min <= x,
 * and x <= max; the same error as cli_int. */
bool cli_double(const char* prog, const char* opt, const char* s, double min, bool min_open, double max,
                const char* what, double* out);

/* A comma-separated list of whole numbers in [lo, hi], at most max of them
 * ("1,2,4"; a trailing comma is allowed). Returns the count (0 for "" or
 * "none"), or −1 when an item is not such a number or there are too many. */
int cli_int_list(const char* s, long* out, int max, long lo, long hi);

/* cli_int_list, at least min_count items, with an error "PROG: OPT:
 * expected a comma-separated list of MIN to MAX integers from LO to HI,
 * got 'S'". Returns the count or −1. */
int cli_ints(const char* prog, const char* opt, const char* s, long* out, int min_count, int max, long lo, long hi);

/* Splits a comma-separated list into at most max items of fewer than 32
 * characters. Returns the count, or −1 on an empty item, a too long one, or
 * too many. */
int cli_split_names(const char* list, char items[][32], int max);

/* Every solver the library has, in its order (at most max). */
int cli_all_solvers(char solvers[][32], int max);

/* The --solvers list: known solver names, at most max. Returns the count, or
 * −1 after printing "PROG: --solvers: bad list '…'" or "PROG: --solvers:
 * unknown solver '…' (known: …)". */
int cli_solvers(const char* prog, const char* list, char solvers[][32], int max);

/* The options every solver bench takes: --solvers LIST, --max-iterations N
 * (>= 1) and --threads N (>= 0, 0: the library's default). When a is one
 * of them and val is not NULL, parses val into the matching field and
 * returns 1 (the caller skips val), or −1 after an error naming the
 * option; returns 0 for any other argument. */
int cli_solver_option(const char* prog, const char* a, const char* val, char solvers[][32], int max_solvers,
                      int* solver_count, int32_t* max_iterations, int32_t* threads);

/* A JSON number, "%.6e", or null when x is not finite. */
void cli_json_number(FILE* f, double x);

#endif
