/*
 * state-type.h: the host fields of one partition as a single native value
 * (type "dcfronts1"), the native queue layout's <prefix>:{p}:host: what
 * the HASH host -> "<act>[@<td>[:<tn>]] <next>[ <marks>]" holds in the
 * zset-list layout (front-state.h says what a field means), as a map from
 * host to field text.
 *
 * Why: every pop and completion reads and writes its host's field. A
 * partition's HASH holds up to 128 fields as one listpack, searched from
 * its start: at 30 M queued URLs that listpack is cold, and finding a
 * field read tens of cache lines; here it is one slot of an
 * open-addressing table (hash inline) and one record.
 *
 * Semantics are a HASH's for what the frontier uses: get, set, delete, a
 * sample of up to n fields (HRANDFIELD n, n > 0), every field; an emptied
 * map is deleted with its key (front-state.c), as Redis deletes an empty
 * HASH.
 *
 * Ownership: the value belongs to its key; pointers it returns are valid
 * until the next change of the map.
 *
 * Thread rules: Redis's main thread.
 */
#ifndef DC_STATE_TYPE_H
#define DC_STATE_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "module-api.h"

struct hst;

extern RedisModuleType *hst_type;

/* Register the type and its commands (OnLoad):
 *   DCFRONT.SGET key host          HGET (a null reply when absent)
 *   DCFRONT.SSET key host value    HSET of one field; 1 when new
 *   DCFRONT.SDEL key host          HDEL of one field
 *   DCFRONT.SRAND key n WITHVALUES HRANDFIELD key n WITHVALUES, n > 0
 *   DCFRONT.SDUMP key              HGETALL */
int hst_register(RedisModuleCtx *ctx);

/* The map held by an open key: NULL when the key is empty (and !create)
 * or holds another type (*wrong = 1). */
struct hst *hst_of(RedisModuleKey *k, int create, int *wrong);

/* The field of host, or NULL; *vlen its length. */
const char *hst_get(const struct hst *m, const char *host, size_t hlen,
                    size_t *vlen);
/* Set it; 1 when the host was new. */
int hst_set(struct hst *m, const char *host, size_t hlen, const char *v,
            size_t vlen);
/* Delete it; 1 when it was there. */
int hst_del(struct hst *m, const char *host, size_t hlen);
size_t hst_count(const struct hst *m);
/* Cache warming for a lookup of the host whose name hashes to hv
 * (lvl_prefetch_first): its slot, or with rec, its record. */
void hst_prefetch(const struct hst *m, uint64_t hv, int rec);

/* The fields one by one: *at starts at 0; 0 after the last. */
int hst_next(const struct hst *m, size_t *at, const char **host,
             size_t *hlen, const char **v, size_t *vlen);

#endif
