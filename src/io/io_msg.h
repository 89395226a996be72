/* dvicontact — internal: the error message of a file reader or writer of
 * the I/O layer (CCP JSON, FCLIB), written into the caller's buffer as
 * "PREFIX: text" (the prefix is the file's name; none when NULL), and as
 * the thread's last error (dvi_error_message). */
#ifndef DVI_IO_MSG_H
#define DVI_IO_MSG_H

#include "dvi/base.h"

#include <stddef.h>

typedef struct io_msg {
    char* msg;          /* the caller's buffer, or NULL */
    size_t n;           /* its size */
    const char* prefix; /* the file's name, or NULL */
} io_msg;

/* Writes the message (if there is a buffer) and returns st. */
dvi_status io_fail(const io_msg* c, dvi_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* DVI_IO_MSG_H */
