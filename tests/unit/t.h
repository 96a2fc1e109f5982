/*
 * t.h: the unit tests' whole framework. CHECK records a failure and goes
 * on; t_done() prints "N passed, M failed" and gives the exit status;
 * t_slurp() reads a test data file.
 */
#ifndef DC_T_H
#define DC_T_H

#include <stdio.h>
#include <stdlib.h>

static int t_pass, t_fail;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            t_pass++;                                                      \
        } else {                                                           \
            t_fail++;                                                      \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static inline int t_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, t_pass, t_fail);
    return t_fail ? 1 : 0;
}

/* The whole file at path, NUL-terminated (the caller frees it), its length
 * in *len; NULL (and *len 0) when it cannot be opened. */
static inline char *t_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    *len = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (buf) {
        *len = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

#endif
