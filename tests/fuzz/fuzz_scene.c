/* dvicontact — fuzz harness: the scene reader (dvi_scene_parse), and for
 * small valid scenes the model built from it and a few steps. */
#include "fuzz_common.h"

#include "dvi/scene.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    dvi_status st = dvi_scene_parse((const char*)data, size, NULL, &s, &e);
    FUZZ_CHECK((st == DVI_OK) == (s != NULL));
    FUZZ_CHECK((st == DVI_OK) == (e.count == 0));
    FUZZ_CHECK(e.count == 0 || (e.text && strlen(e.text) > 0));
    dvi_scene_errors_free(&e);
    if (!s) return 0;
    /* a valid scene: build and step it when it is small */
    if (dvi_scene_body_count(s) <= 200) {
        dvi_model* m = NULL;
        char msg[512];
        if (dvi_model_create(s, &m, msg, sizeof msg) == DVI_OK) {
            for (int i = 0; i < 3; i++)
                if (dvi_model_step(m) < 0) break;
            dvi_health_report r;
            FUZZ_CHECK(dvi_model_health(m, &r) == DVI_OK);
            dvi_model_destroy(m);
        } else {
            FUZZ_CHECK(m == NULL && msg[0] != '\0');
        }
    }
    dvi_scene_destroy(s);
    return 0;
}
