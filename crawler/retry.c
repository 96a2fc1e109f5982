/*
 * retry.c: the retry table of a node (node-write.c's finish_job): how many
 * times each URL that failed transiently (transport error, 5xx, 429) has
 * been tried again, by fingerprint. An entry lives from the first failure
 * to the final outcome; the table is small, so lookups scan it. See
 * node-internal.h.
 */
#include <stdint.h>
#include <stdlib.h>

#include "conf.h"
#include "node-internal.h"

static size_t retry_find(const struct retry *t, uint64_t fp)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].fp == fp)
            return i;
    return SIZE_MAX;
}

static void retry_remove(struct retry *t, size_t i)
{
    t->v[i] = t->v[--t->n];
}

int retry_again(struct retry *t, uint64_t fp, int max, unsigned *attempt)
{
    size_t i = retry_find(t, fp);
    if (i == SIZE_MAX) {
        if (t->n == RETRY_MAX || max == 0)
            return 0;
        xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
        i = t->n++;
        t->v[i].fp = fp;
        t->v[i].tries = 0;
    }
    if (t->v[i].tries >= max) {
        retry_remove(t, i); /* final: forget */
        return 0;
    }
    *attempt = ++t->v[i].tries;
    return 1;
}

void retry_forget(struct retry *t, uint64_t fp)
{
    size_t i = retry_find(t, fp);
    if (i != SIZE_MAX)
        retry_remove(t, i);
}

void retry_release(struct retry *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}
