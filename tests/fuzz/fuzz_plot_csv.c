/* dvicontact — fuzz harness: the CSV reader of `dvi plot`
 * (dvi_svg_plot_csv, through a temporary file as the tool reads one). The
 * status must agree with the result: DVI_OK and an SVG that starts with
 * "<svg" or "<?xml", or an error, a message and no SVG. */
#include "fuzz_common.h"

#include "dvi/output.h"

#include <string.h>
#include <unistd.h>

static char g_dir[64];

static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/in.csv", g_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/out.svg", g_dir);
    unlink(path);
    rmdir(g_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/dvi_fuzz_plot_XXXXXX");
        FUZZ_CHECK(mkdtemp(g_dir) != NULL);
        atexit(remove_dir);
    }
    char csv[128], svg[128];
    snprintf(csv, sizeof csv, "%s/in.csv", g_dir);
    snprintf(svg, sizeof svg, "%s/out.svg", g_dir);
    FILE* f = fopen(csv, "wb");
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(size == 0 || fwrite(data, 1, size, f) == size);
    FUZZ_CHECK(fclose(f) == 0);
    unlink(svg);
    char msg[512] = "";
    dvi_status st = dvi_svg_plot_csv(csv, svg, NULL, msg, sizeof msg);
    FILE* out = fopen(svg, "rb");
    if (st == DVI_OK) {
        FUZZ_CHECK(msg[0] == '\0');
        FUZZ_CHECK(out != NULL);
        char head[8] = "";
        FUZZ_CHECK(fread(head, 1, 5, out) == 5);
        FUZZ_CHECK(memcmp(head, "<svg", 4) == 0 || memcmp(head, "<?xml", 5) == 0);
    } else {
        FUZZ_CHECK(msg[0] != '\0');
        FUZZ_CHECK(out == NULL);
    }
    if (out) fclose(out);
    return 0;
}
