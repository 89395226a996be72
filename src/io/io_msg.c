/* dvicontact — the I/O layer's file error messages (io_msg.h). */
#include "io_msg.h"

#include "error.h"

#include <stdarg.h>
#include <stdio.h>

dvi_status dvi_io_fail(const dvi_io_msg* c, dvi_status st, const char* fmt, ...)
{
    char text[1024];
    size_t k = 0;
    if (c->prefix) {
        int w = snprintf(text, sizeof text, "%s: ", c->prefix);
        k = w < 0 ? 0 : (size_t)w >= sizeof text ? sizeof text - 1 : (size_t)w;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + k, sizeof text - k, fmt, ap);
    va_end(ap);
    if (c->msg && c->n > 0) snprintf(c->msg, c->n, "%s", text);
    return dvi_error_set(st, text);
}
