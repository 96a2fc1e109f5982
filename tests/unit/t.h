/*
 * t.h: the unit tests' whole framework. CHECK records a failure and goes
 * on; t_done() prints "N passed, M failed" and gives the exit status.
 */
#ifndef DC_T_H
#define DC_T_H

#include <stdio.h>

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

#endif
