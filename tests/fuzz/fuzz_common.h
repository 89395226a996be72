/* dvicontact — shared by the fuzz harnesses (tests/fuzz/README.md).
 *
 * Each harness defines LLVMFuzzerTestOneInput(data, size): one input, any
 * bytes, must never crash, leak or hang, and the reader's status must agree
 * with its result (an object and no message, or a message and none).
 * Built with -Dfuzz=true (clang) they are libFuzzer targets; otherwise
 * replay.c gives them a main() that runs every file of the directories or
 * files named on the command line, which is what the test suite does with
 * the fixed corpus in tests/fuzz/corpus. */
#ifndef DVI_FUZZ_COMMON_H
#define DVI_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* An inconsistency between a reader's status and its result: a bug. */
#define FUZZ_CHECK(cond)                                                                                    \
    do {                                                                                                    \
        if (!(cond)) {                                                                                      \
            fprintf(stderr, "fuzz: %s:%d: %s\n", __FILE__, __LINE__, #cond);                              \
            abort();                                                                                        \
        }                                                                                                   \
    } while (0)

#endif
