/* dvicontact — include/dvi/dist.h in a build without MPI (meson option
 * mpi=disabled, or no MPI found): the functions exist, creation is refused
 * with DVI_ERR_UNSUPPORTED and a message saying why. */
#include "dvi/dist.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

dvi_dist_settings dvi_default_dist_settings(void)
{
    dvi_dist_settings s;
    memset(&s, 0, sizeof s);
    return s;
}

bool dvi_dist_available(void)
{
    return false;
}

dvi_status dvi_dist_create(const dvi_scene* scene, const dvi_dist_settings* settings, dvi_dist** out, char* msg,
                           size_t msg_size)
{
    (void)scene, (void)settings;
    if (out) *out = NULL;
    if (msg && msg_size > 0)
        snprintf(msg, msg_size, "this build of dvicontact has no MPI (meson option mpi; Debian: libopenmpi-dev)");
    return DVI_ERR_UNSUPPORTED;
}

void dvi_dist_destroy(dvi_dist* dist)
{
    (void)dist;
}

dvi_status dvi_dist_step(dvi_dist* dist)
{
    (void)dist;
    return DVI_ERR_UNSUPPORTED;
}

const char* dvi_dist_last_error(const dvi_dist* dist)
{
    (void)dist;
    return "this build of dvicontact has no MPI";
}

double dvi_dist_time(const dvi_dist* dist)
{
    (void)dist;
    return NAN;
}

int64_t dvi_dist_step_count(const dvi_dist* dist)
{
    (void)dist;
    return -1;
}

dvi_status dvi_dist_get_stats(const dvi_dist* dist, dvi_dist_stats* out)
{
    (void)dist, (void)out;
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_gather_states(dvi_dist* dist, double* states)
{
    (void)dist, (void)states;
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_state_hash(dvi_dist* dist, uint64_t* out)
{
    (void)dist, (void)out;
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_save(dvi_dist* dist, const char* dir)
{
    (void)dist, (void)dir;
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_load(dvi_dist* dist, const char* dir)
{
    (void)dist, (void)dir;
    return DVI_ERR_UNSUPPORTED;
}

int32_t dvi_dist_probe_count(const dvi_dist* dist)
{
    (void)dist;
    return 0;
}

dvi_status dvi_dist_probe_info(const dvi_dist* dist, int32_t probe, dvi_probe_info* out)
{
    (void)dist, (void)probe, (void)out;
    return DVI_ERR_UNSUPPORTED;
}

bool dvi_dist_probe_due(const dvi_dist* dist, int32_t probe)
{
    (void)dist, (void)probe;
    return false;
}

bool dvi_dist_probe_available(const dvi_dist* dist, int32_t probe)
{
    (void)dist, (void)probe;
    return false;
}

dvi_status dvi_dist_probe_sample(dvi_dist* dist, int32_t probe, double* values)
{
    (void)dist, (void)probe, (void)values;
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_write_vtk(dvi_dist* dist, const char* dir, int frame, bool ascii)
{
    (void)dist, (void)dir, (void)frame, (void)ascii;
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size)
{
    (void)dir, (void)frames, (void)times;
    if (msg && msg_size > 0) snprintf(msg, msg_size, "this build of dvicontact has no MPI");
    return DVI_ERR_UNSUPPORTED;
}

dvi_status dvi_dist_init(void)
{
    return DVI_ERR_UNSUPPORTED;
}

void dvi_dist_finalize(void) {}

void dvi_dist_world(int* rank, int* size)
{
    if (rank) *rank = 0;
    if (size) *size = 1;
}

int dvi_dist_agree_max(int value)
{
    return value;
}
