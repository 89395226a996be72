/* dvicontact — the I/O layer's file error messages (io_msg.h). */
#include "io_msg.h"

#include "error.h"

#include <stdarg.h>
#include <stdio.h>

dvi_status io_fail(const io_msg* c, dvi_status st, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_error_vreport(c->msg, c->n, st, c->prefix, fmt, ap);
    va_end(ap);
    return st;
}
