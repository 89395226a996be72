/* dvicontact — opening an input file only when it is a regular file of a
 * bounded size, before a byte of it is read. A FIFO given as a scene would
 * block the reader forever, /dev/urandom would be read without end, and a
 * sparse file of a terabyte would be read to its end before being refused;
 * all three are refused here at once, with what they are. The open does
 * not block (O_NONBLOCK, cleared after the check). Header-only so that the
 * library's readers share one definition. */
#ifndef DVI_REGULAR_FILE_H
#define DVI_REGULAR_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens `path` as base_open_regular does, with open(2) flags `oflags`
 * (O_RDONLY, or O_RDWR to update a file in place) and the stdio mode
 * `fmode` that matches them ("rb", "r+b"). */
static inline FILE* base_open_regular_mode(const char* path, int oflags, const char* fmode, uint64_t max_bytes,
                                          uint64_t* bytes, char* why, size_t why_size)
{
    int fd = open(path, oflags | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open (%s)", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot read its status (%s)", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                           : S_ISFIFO(st.st_mode) ? "a FIFO"
                           : S_ISCHR(st.st_mode)  ? "a character device"
                           : S_ISBLK(st.st_mode)  ? "a block device"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : "not a file";
        snprintf(why, why_size, "not a regular file (%s)", what);
        close(fd);
        return NULL;
    }
    if (max_bytes > 0 && (uint64_t)st.st_size > max_bytes) {
        snprintf(why, why_size, "larger than %llu bytes (%llu bytes)", (unsigned long long)max_bytes,
                 (unsigned long long)st.st_size);
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE* f = fdopen(fd, fmode);
    if (!f) {
        snprintf(why, why_size, "cannot open (%s)", strerror(errno));
        close(fd);
        return NULL;
    }
    if (bytes) *bytes = (uint64_t)st.st_size;
    return f;
}

/* Opens `path` for reading ("rb"). On failure returns NULL and writes why
 * into why[why_size] ("cannot open (No such file or directory)", "not a
 * regular file (a FIFO)", "larger than 1073741824 bytes (1099511627776
 * bytes)"); the readers report all of these as DVI_ERR_IO (the file cannot
 * be read as input). max_bytes 0: no size limit. *bytes (if given) gets the
 * size. */
static inline FILE* base_open_regular(const char* path, uint64_t max_bytes, uint64_t* bytes, char* why, size_t why_size)
{
    return base_open_regular_mode(path, O_RDONLY, "rb", max_bytes, bytes, why, why_size);
}

/* Reads the whole of `path` (opened as base_open_regular does, at most
 * max_bytes, 0: no limit, also if the file grows while it is read) into a
 * malloc'd buffer *data of *length bytes, followed by a NUL byte that is not
 * counted. Returns 0; -1 when the file cannot be opened or read, or exceeds
 * max_bytes (why says which); -2 when out of memory. *data is NULL on
 * failure. */
static inline int base_read_regular(const char* path, uint64_t max_bytes, char** data, size_t* length, char* why,
                                   size_t why_size)
{
    *data = NULL;
    *length = 0;
    uint64_t size = 0;
    FILE* f = base_open_regular(path, max_bytes, &size, why, why_size);
    if (!f) return -1;
    size_t cap = size < (1u << 16) ? (size_t)1 << 16 : (size_t)size + 1, len = 0;
    char* buf = malloc(cap + 1);
    int rc = 0;
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        if (max_bytes > 0 && len > max_bytes) {
            snprintf(why, why_size, "larger than %llu bytes", (unsigned long long)max_bytes);
            rc = -1;
            break;
        }
        char* nb = cap <= SIZE_MAX / 4 ? realloc(buf, 2 * cap + 1) : NULL;
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (!buf) {
        snprintf(why, why_size, "out of memory reading the file");
        rc = -2;
    } else if (rc == 0 && ferror(f)) {
        snprintf(why, why_size, "read error (%s)", strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *data = buf;
    *length = len;
    return 0;
}

#endif
