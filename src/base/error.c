/* dvicontact — the thread's last error message (base.h). One buffer per
 * thread, written only when a call fails: a successful call costs nothing
 * and leaves the message of the last failure in place, as errno does. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DVI_ERROR_BYTES 2048

static _Thread_local char last_message[DVI_ERROR_BYTES];
static _Thread_local dvi_status last_status = DVI_OK;

dvi_status base_error_set(dvi_status st, const char* text)
{
    if (!text || !text[0]) text = dvi_status_string(st);
    size_t n = strlen(text);
    if (n >= sizeof last_message) { /* cut at a character boundary, and say so */
        n = sizeof last_message - 4;
        while (n > 0 && ((unsigned char)text[n] & 0xC0u) == 0x80u) n--;
        memcpy(last_message, text, n);
        memcpy(last_message + n, "...", 4);
    } else {
        memcpy(last_message, text, n + 1);
    }
    last_status = st;
    return st;
}

dvi_status base_error_setf(dvi_status st, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_error_vreport(NULL, 0, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

dvi_status dvi_error_report(dvi_status st, const char* fmt, ...)
{
    if (!fmt) return base_error_set(st, NULL); /* the status's own string */
    va_list ap;
    va_start(ap, fmt);
    base_error_vreport(NULL, 0, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

dvi_status base_error_vreport(char* msg, size_t msg_size, dvi_status st, const char* prefix, const char* fmt,
                             va_list ap)
{
    char buf[DVI_ERROR_BYTES];
    size_t k = 0;
    if (prefix) {
        int w = snprintf(buf, sizeof buf, "%s: ", prefix);
        k = w < 0 ? 0 : (size_t)w >= sizeof buf ? sizeof buf - 1 : (size_t)w;
    }
    vsnprintf(buf + k, sizeof buf - k, fmt, ap);
    if (msg && msg_size > 0) snprintf(msg, msg_size, "%s", buf);
    return base_error_set(st, buf);
}

const char* dvi_error_message(void)
{
    return last_message;
}

dvi_status dvi_error_status(void)
{
    return last_status;
}

void dvi_error_clear(void)
{
    last_message[0] = '\0';
    last_status = DVI_OK;
}
