/* dvicontact — base definitions: export macro, version, status codes.
 *
 * Every public function of the library returns a dvi_status (or a value from
 * which failure is visible) and never prints or exits. */
#ifndef DVI_BASE_H
#define DVI_BASE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(DVI_BUILDING_SHARED)
#define DVI_API __declspec(dllexport)
#elif defined(__GNUC__) && defined(DVI_BUILDING_LIBRARY)
#define DVI_API __attribute__((visibility("default")))
#else
#define DVI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Library version, as numbers and as a string ("MAJOR.MINOR.PATCH").
#define DVI_VERSION_MAJOR 0
#define DVI_VERSION_MINOR 1
#define DVI_VERSION_PATCH 0
#define DVI_VERSION_STRING "0.1.0"

/// Status codes. Values >= 0 mean the result is usable (possibly not
/// converged); values < 0 are errors and leave outputs unspecified.
typedef enum dvi_status {
    DVI_OK = 0,               ///< success
    DVI_NOT_CONVERGED = 1,    ///< ran, but the stopping test was not met
    DVI_ABORTED = 2,          ///< stopped on request
    DVI_ERR_NOMEM = -1,       ///< an allocation failed
    DVI_ERR_INVALID_ARG = -2, ///< bad input: see the message for the place
    DVI_ERR_SINGULAR = -3,    ///< a matrix that must be invertible is not
    DVI_ERR_NUMERIC = -4,     ///< NaN/Inf appeared during a computation
    DVI_ERR_UNSUPPORTED = -5, ///< the request is valid but not supported here
    DVI_ERR_PARSE = -6,       ///< malformed file
    DVI_ERR_IO = -7           ///< file could not be read or written
} dvi_status;

/// Where the library takes its memory from (dvi_solver_settings.allocator,
/// dvi_world_def.allocator). All three functions NULL (the default) means
/// libc's malloc, realloc and free; otherwise all three must be set. Every
/// block an object allocates is freed through the same allocator, by the
/// time the object is destroyed. alloc and realloc return NULL on failure
/// (the library then returns DVI_ERR_NOMEM); realloc(user, NULL, n) must
/// act as alloc, and free(user, NULL) must do nothing. Old sizes are not
/// passed: several of the library's arrays grow by element counts it does
/// not keep in bytes, so an arena that needs them keeps its own header.
/// Memory the library documents as "free with free()" (the blob of
/// dvi_world_save_state) stays on libc. The functions are called from the
/// thread that called the library, never from inside an OpenMP region.
typedef struct dvi_allocator {
    void* (*alloc)(void* user, size_t size);
    void* (*realloc)(void* user, void* ptr, size_t new_size);
    void (*free)(void* user, void* ptr);
    void* user; ///< passed back to the three functions
} dvi_allocator;

/// The message of the last call that failed on the calling thread: the one
/// way to get the text of any error of the library.
///
/// Every call that returns an error (a status < 0, or non-zero from the
/// writers of output.h that return int) or a solve that ends without
/// converging (DVI_NOT_CONVERGED) leaves here, for the calling thread, a
/// one-line English message naming the place ("bodies[3].mass: must be
/// > 0"; a scene's problems one per line), until the next such call on the
/// same thread replaces it. Successful calls leave it as it was (as errno);
/// dvi_error_clear() empties it. Where a call also has a channel of its own
/// (a solve's result->message, a world's dvi_world_last_error, a caller's
/// (msg, msg_size) buffer, a scene's dvi_scene_errors) that channel holds
/// the same text. Messages longer than 2047 bytes are cut, ending in "...".
DVI_API const char* dvi_error_message(void);
/// The status of that call (DVI_OK after dvi_error_clear or before any failure).
DVI_API dvi_status dvi_error_status(void);
/// Empties the calling thread's message (dvi_error_message() returns "").
DVI_API void dvi_error_clear(void);

/// Sets the calling thread's message (printf format) and returns st: for
/// code that runs inside the library's calls, e.g. a force element's apply
/// (<dvi/world.h>), so that the failing call reports its own reason. fmt
/// NULL: the status's own string (dvi_status_string).
DVI_API dvi_status dvi_error_report(dvi_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/// A short, constant, English description of a status code.
DVI_API const char* dvi_status_string(dvi_status s);

/// The version of the library actually linked (may differ from the header).
DVI_API const char* dvi_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* DVI_BASE_H */
