/* Shared test helpers: rotations, world building and files (test_util.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dvi/world.h"
#include "test_util.h"

void test_body_state(const dvi_world* w, dvi_body_id b, double x[19])
{
    dvi_body_get_position(w, b, x);
    dvi_body_get_orientation(w, b, x + 3);
    dvi_body_get_velocity(w, b, x + 7);
    dvi_body_get_angular_velocity(w, b, x + 10);
    dvi_body_get_contact_force(w, b, x + 13, x + 16);
}

void test_rot_axis(double R[9], double x, double y, double z, double t)
{
    double l = sqrt(x * x + y * y + z * z);
    x /= l;
    y /= l;
    z /= l;
    double c = cos(t), s = sin(t), v = 1.0 - c;
    double M[9] = {c + x * x * v,     x * y * v - z * s, x * z * v + y * s, y * x * v + z * s, c + y * y * v,
                   y * z * v - x * s, z * x * v - y * s, z * y * v + x * s, c + z * z * v};
    memcpy(R, M, sizeof M);
}

void test_mat_mul(double O[9], const double A[9], const double B[9])
{
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(O, T, sizeof T);
}

dvi_shape_def test_plane_def(double theta)
{
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    sd.offset_orientation[0] = cos(theta / 2);
    sd.offset_orientation[1] = sin(theta / 2);
    return sd;
}

void test_add_shape(dvi_world* w, dvi_body_id b, const dvi_shape_def* sd)
{
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, sd, &s), DVI_OK);
}

dvi_body_id test_fixed_plane(dvi_world* w, const dvi_shape_def* plane)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_FIXED;
    dvi_body_id g;
    assert_int_equal(dvi_body_create(w, &bd, &g), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    if (plane) sd = *plane;
    sd.type = DVI_SHAPE_PLANE;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, g, &sd, &s), DVI_OK);
    return g;
}

char* test_read_text(const char* path, size_t* size)
{
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char* buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (size) *size = n;
    return buf;
}

void test_write_text(const char* path, const char* text)
{
    FILE* f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

void test_remove_tree(const char* path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR* d = opendir(path);
        if (d) {
            struct dirent* e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                test_remove_tree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}
