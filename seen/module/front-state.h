/*
 * front-state.h: a frontier host's state field, as the Lua scripts keep it
 * (frontier/lua/lib/common.lua), read and written by the module's native
 * frontier commands (pop-module.c). One field of the partition's host
 * HASH: "<act>[@<td>[:<tn>]] <next>[ <marks>]": act = the host's URLs
 * leased (every depth), td = the deepest depth it has leases of and tn =
 * how many (act when left out), next = its politeness clock in ms (0:
 * none), marks = the depths ("1,3") whose ready set gave it the busy
 * score. The functions are common.lua's, one for one (same names), so a
 * field written by either side reads the same on the other.
 *
 * Thread rules: Redis's main thread only.
 */
#ifndef DC_FRONT_STATE_H
#define DC_FRONT_STATE_H

#include "module-api.h"

/* common.lua's busy: the score of a host at its connection limit */
#define FRONT_BUSY 9000000000000000.0
#define FRONT_MARKS 512 /* marks longer than this read as none */

struct front_st {
    long long act, nx;
    int has_td;
    long long td, tn;
    char m[FRONT_MARKS];
};

/* hget_st: the host's state from the open host HASH, or the native
 * layout's map (state-type.h) when the key holds one (zeros when absent
 * or unreadable, as parse_st). */
void front_st_get(RedisModuleKey *hash, RedisModuleString *host,
                  struct front_st *st);

/* hset_st: write it back, or delete the field when act <= 0, nx <= 0
 * and no marks; native: into the native layout's map (made when the key
 * is empty, deleted with its last field), else into the HASH. */
void front_st_set(RedisModuleCtx *ctx, RedisModuleKey *hash, int native,
                  RedisModuleString *host, const struct front_st *st);
/* front_open_as for the host key: a HASH, or native the map; 0 when it is
 * missing or of that type, else -1 (the key stays open). */
int front_open_state(RedisModuleCtx *ctx, RedisModuleString *name,
                     int native, RedisModuleKey **k);

/* low(act, td, tn, d) */
long long front_low(const struct front_st *st, long long d);

/* lease_add(act, td, tn, d, k), in place */
void front_lease_add(struct front_st *st, long long d, long long k);

/* mark(m, d): out = m with depth d (its decimal text) added; out may be
 * m. Returns 1 when out differs from m. */
int front_mark(const char *m, const char *d, char *out);

/* A key opened for reading and writing, by name or by its text. */
RedisModuleKey *front_open(RedisModuleCtx *ctx, RedisModuleString *name);
RedisModuleKey *front_open_text(RedisModuleCtx *ctx, const char *name,
                                size_t len);

/* 1 when k is missing or of type (REDISMODULE_KEYTYPE_*). */
int front_is(RedisModuleKey *k, int type);
/* front_open into *k, then 0 when it is missing or of type, else -1 (the
 * key stays open: the caller closes it, or the context's auto memory). */
int front_open_as(RedisModuleCtx *ctx, RedisModuleString *name, int type,
                  RedisModuleKey **k);

/* The value of a module type t held by an open key: NULL when the key is
 * empty and make is NULL, a new value from make set on it when empty, and
 * NULL with *wrong = 1 when it holds anything else. */
void *front_value_of(RedisModuleKey *k, RedisModuleType *t,
                     void *(*make)(void), int *wrong);

/* ready(h) of lib/ready.lua: the earliest score below busy in the ready
 * set h, or -1. */
long long front_ready(RedisModuleKey *h);

/* Counter increments by field name (pend per depth, stat fields), a few
 * per call, added to their hash at the end. */
struct front_counts {
    struct {
        char name[40];
        long long n;
    } *v;
    size_t n, cap;
};

void front_count_add(struct front_counts *c, const char *name, long long k);
/* HINCRBY hash name sign*n for each counter, deleting a field that falls
 * to 0 or below when drop; frees c. -1 (the rest skipped) when a field
 * holds no integer. */
int front_counts_flush(RedisModuleCtx *ctx, RedisModuleKey *hash,
                       struct front_counts *c, int sign, int drop);

/* HINCRBY hash field k through the key API; *out the new value. -1 when
 * the field holds no integer. */
int front_hincr(RedisModuleCtx *ctx, RedisModuleKey *hash, const char *field,
                size_t flen, long long k, long long *out);

/* qenc(url, host) of common.lua: a leading "http://<host>" or
 * "https://<host>" kept as one byte, \1 or \2; any other URL as it is. */
RedisModuleString *front_qenc(RedisModuleCtx *ctx, const char *url,
                              size_t ulen, const char *host, size_t hlen);
/* qenc's form without a copy: *tag (\1, \2, or 0 for none) then url from
 * the offset returned. */
size_t front_qsplit(const char *url, size_t ulen, const char *host,
                    size_t hlen, char *tag);

#endif
