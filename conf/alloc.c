/*
 * alloc.c: allocation wrappers that abort on out-of-memory (a crawler
 * daemon has no useful way to go on without memory), the error names, and
 * the clocks. See conf.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"

static const char *const err_names[] = {
#define XX(name, msg) msg,
    DC_ERR_MAP(XX)
#undef XX
};

const char *dc_strerror(int err)
{
    if (err < 0 || err >= DC_ERR_COUNT)
        return "unknown error";
    return err_names[err];
}

static void oom(size_t n)
{
    fprintf(stderr, "dcrawl: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        oom(nmemb * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void xgrow(void **p, size_t *cap, size_t need, size_t sz)
{
    size_t c = *cap ? *cap : 8;
    if (need <= *cap)
        return;
    while (c < need)
        c *= 2;
    *p = xrealloc(*p, c * sz);
    *cap = c;
}

int64_t dc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t dc_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
