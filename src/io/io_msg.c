/* dvicontact — the I/O layer's file error messages (io_msg.h). */
#include "io_msg.h"

#include <stdarg.h>
#include <stdio.h>

dvi_status dvi_io_fail(const dvi_io_msg* c, dvi_status st, const char* fmt, ...)
{
    if (!c->msg || c->n == 0) return st;
    size_t k = 0;
    if (c->prefix) {
        int w = snprintf(c->msg, c->n, "%s: ", c->prefix);
        k = w < 0 ? 0 : (size_t)w >= c->n ? c->n - 1 : (size_t)w;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg + k, c->n - k, fmt, ap);
    va_end(ap);
    return st;
}
