/*
 * otab.c: the open-addressing table of otab.h.
 */
#include "module-api.h"
#include "otab.h"

uint64_t otab_hash(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static void put(struct otab_slot *s, size_t cap, uint64_t hv, void *rec)
{
    size_t i = hv & (cap - 1);

    while (s[i].rec)
        i = (i + 1) & (cap - 1);
    s[i].hv = hv;
    s[i].rec = rec;
}

size_t otab_find(const struct otab *t, uint64_t hv, otab_eq eq,
                 const char *key, size_t len)
{
    size_t i;

    if (!t->cap)
        return (size_t)-1;
    for (i = hv & (t->cap - 1); t->s[i].rec; i = (i + 1) & (t->cap - 1))
        if (t->s[i].hv == hv && eq(t->s[i].rec, key, len))
            return i;
    return (size_t)-1;
}

void otab_prefetch(const struct otab *t, uint64_t hv, int rec)
{
    size_t i;

    if (!t->cap)
        return;
    i = hv & (t->cap - 1);
    if (!rec) {
        __builtin_prefetch(&t->s[i]);
        return;
    }
    for (; t->s[i].rec; i = (i + 1) & (t->cap - 1))
        if (t->s[i].hv == hv) {
            __builtin_prefetch(t->s[i].rec);
            return;
        }
}

void otab_add(struct otab *t, uint64_t hv, void *rec)
{
    if (2 * (t->live + 1) > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct otab_slot *s = RedisModule_Calloc(cap, sizeof(*s));
        for (size_t i = 0; i < t->cap; i++)
            if (t->s[i].rec)
                put(s, cap, t->s[i].hv, t->s[i].rec);
        RedisModule_Free(t->s);
        t->s = s;
        t->cap = cap;
    }
    put(t->s, t->cap, hv, rec);
    t->live++;
}

void otab_del(struct otab *t, size_t i)
{
    size_t mask = t->cap - 1, j = i;

    t->s[i].rec = NULL;
    t->live--;
    for (;;) {
        size_t home;
        j = (j + 1) & mask;
        if (!t->s[j].rec)
            break;
        home = t->s[j].hv & mask;
        /* move j back to i when its home is not in (i, j] */
        if ((j > i && (home <= i || home > j)) ||
            (j < i && (home <= i && home > j))) {
            t->s[i] = t->s[j];
            t->s[j].rec = NULL;
            i = j;
        }
    }
}

void *otab_next(const struct otab *t, size_t *at)
{
    while (*at < t->cap) {
        void *rec = t->s[(*at)++].rec;
        if (rec)
            return rec;
    }
    return NULL;
}

void otab_free(struct otab *t)
{
    RedisModule_Free(t->s);
    t->s = NULL;
    t->cap = t->live = 0;
}
