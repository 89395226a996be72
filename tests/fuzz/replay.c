/* dvicontact — the fuzz harnesses' main() outside libFuzzer: runs every
 * file named, or found in a directory named, on the command line through
 * LLVMFuzzerTestOneInput, in sorted order, and prints how many. A crash or
 * a failed FUZZ_CHECK ends the process abnormally, so the suite fails. */
#include "fuzz_common.h"
#include "regular_file.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char* path)
{
    char* buf = NULL;
    size_t n = 0;
    char why[160];
    if (base_read_regular(path, 0, &buf, &n, why, sizeof why) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, why);
        return -1;
    }
    LLVMFuzzerTestOneInput((const uint8_t*)buf, n);
    free(buf);
    return 0;
}

static int cmp_str(const void* a, const void* b)
{
    return strcmp(*(char* const*)a, *(char* const*)b);
}

int main(int argc, char** argv)
{
    long done = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: not found\n", argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0) return 2;
            done++;
            continue;
        }
        DIR* d = opendir(argv[i]);
        if (!d) return 2;
        char** names = NULL;
        size_t count = 0, cap = 0;
        struct dirent* e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            if (count == cap) {
                cap = cap ? 2 * cap : 64;
                char** nn = realloc(names, cap * sizeof *nn);
                if (!nn) return 2;
                names = nn;
            }
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[count] = malloc(len);
            if (!names[count]) return 2;
            snprintf(names[count], len, "%s/%s", argv[i], e->d_name);
            count++;
        }
        closedir(d);
        qsort(names, count, sizeof *names, cmp_str);
        for (size_t k = 0; k < count; k++) {
            struct stat fs;
            if (stat(names[k], &fs) == 0 && S_ISREG(fs.st_mode)) {
                if (run_file(names[k]) != 0) return 2;
                done++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %ld inputs\n", done);
    return done > 0 ? 0 : 2;
}
