/* Finding the project's data files — the example scenes, the scene schema,
 * the rover reference model — from a program of the build tree or of an
 * installed copy, with no path of the build machine compiled in.
 *
 * The data directory holds
 *   scenes/NAME.json              the example scenes (examples/scenes/)
 *   scene.schema.json             the scene file schema (docs/)
 *   rover/rocker_bogie_rover.json the rover reference model (data/rover/)
 * and is, in this order, the first of
 *   1. $DVICONTACT_DATA, when set (a user's own copy);
 *   2. EXE/../data, EXE being the directory of the running program: the
 *      build tree, into which meson copies the data (data/meson.build);
 *   3. EXE/<bindir-to-datadir>/dvicontact: an installed copy
 *      (PREFIX/bin/dvi finds PREFIX/share/dvicontact);
 *   4. EXE/../../data: the build tree, for the programs two folders down
 *      in it (studies/rover/);
 * that exists. Programs also take an explicit path where a file matters
 * (--reference, a scene argument), which wins over all of these. */
#ifndef DVI_TOOL_DATA_PATH_H
#define DVI_TOOL_DATA_PATH_H

#include <stddef.h>

/* Writes into out (n bytes) the path of `rel` (e.g. "scenes/pendulum.json")
 * in the first data directory above that holds it, and returns 0. When no
 * directory holds it, returns -1 and writes into out a sentence naming the
 * places tried and how to point the program at the file. */
int data_path_find(const char* rel, char* out, size_t n);

/* For a program's option with a default in the data directory: `given`
 * when it is not NULL; else the path of `rel` found as by data_path_find,
 * written into buf (n bytes). When it is nowhere, prints "PROG: " and the
 * places tried on stderr and returns NULL. */
const char* data_path_or(const char* given, const char* rel, char* buf, size_t n, const char* prog);

/* Writes into out the data directory the program would use (the first of
 * the list above that exists) and returns 0; -1 (out: the places tried)
 * when there is none. */
int data_path_dir(char* out, size_t n);

/* Writes into out the directory of the running program (no trailing
 * slash) and returns 0; -1 when it cannot be found. */
int data_path_exe_dir(char* out, size_t n);

#endif
