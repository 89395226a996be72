/* dvicontact — fuzz harness: the FCLIB (HDF5) reader. HDF5 reads files, so
 * each input is written to a temporary file first. */
#include "fuzz_common.h"

#include "dvi/io.h"

#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    char path[] = "/tmp/dvi_fuzz_fclib_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) break;
        off += (size_t)n;
    }
    close(fd);
    dvi_ccp_file* f = NULL;
    dvi_fclib_info info;
    char msg[512] = "";
    dvi_status st = dvi_fclib_read_ex(path, 0, &f, &info, msg, sizeof msg);
    unlink(path);
    FUZZ_CHECK((st == DVI_OK) == (f != NULL));
    FUZZ_CHECK(st == DVI_OK || msg[0] != '\0');
    if (f) {
        dvi_ccp_file_free(f);
        dvi_fclib_info_clear(&info);
    }
    return 0;
}
