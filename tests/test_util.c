/* Shared test helpers: world building and files (test_util.h). */
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

dvi_shape_def test_plane_def(double theta)
{
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    sd.offset_orientation[0] = cos(theta / 2);
    sd.offset_orientation[1] = sin(theta / 2);
    return sd;
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
