/* dvicontact — the thread's last error message (dvi_error_message, base.h)
 * as the layers set it. Every public call that fails goes through one of
 * these before it returns, so that dvi_error_message() always says why. */
#ifndef DVI_ERROR_H
#define DVI_ERROR_H

#include "dvi/base.h"

#include <stdarg.h>
#include <stddef.h>

/* Copies text (cut to the buffer) as the calling thread's last error and
 * returns st. text NULL or "" stores the status's own string. */
dvi_status base_error_set(dvi_status st, const char* text);

/* Same with a printf format. */
dvi_status base_error_setf(dvi_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Formats the message, "PREFIX: " first when prefix is not NULL, as the
 * thread's last error and copies it into the caller's buffer msg[msg_size]
 * too (when msg is not NULL); returns st. The one formatter of the layers'
 * error messages. */
dvi_status base_error_vreport(char* msg, size_t msg_size, dvi_status st, const char* prefix, const char* fmt,
                             va_list ap);

/* The check of a pointer argument a public function needs: when `arg` is
 * NULL, returns DVI_ERR_INVALID_ARG from the enclosing function with the
 * message "FUNCTION: NAME is NULL". */
#define DVI_REQUIRE_ARG(arg)                                                                                        \
    do {                                                                                                            \
        if (!(arg)) return base_error_setf(DVI_ERR_INVALID_ARG, "%s: %s is NULL", __func__, #arg);                   \
    } while (0)

#endif /* DVI_ERROR_H */
