/*
 * seen.h: the crawl's seen-set, the set of URL fingerprints that makes
 * a URL "new" exactly once over the whole crawl, whichever node asks.
 *
 * Two layouts of the same set in Redis, chosen once per crawl and recorded
 * in <prefix>:meta seen_layout (frontier/frontier.c adopts it):
 *   mod-u64   one key "<prefix>:{p}:S" per partition, of the type of the
 *             dcrawl-seen Redis module (seen/module/, built as
 *             build/dcrawl-seen.so); its client side is seen/client-mod.c;
 *   b256-i64  Lua over small intset buckets "<prefix>:{p}:s:<b>"
 *             (dedup.h), client side seen/seen.c.
 * The frontier's admit script inserts into the same keys, so a URL marked
 * here is "seen" to frontier_admit and the reverse.
 *
 * These functions use a frontier handle (frontier.h) for its connection,
 * its partitioning and the layout it adopted: the seen client shares the
 * frontier's Redis transport (frontier-internal.h), nothing else.
 *
 * Thread rules: as struct frontier, one thread at a time.
 */
#ifndef DC_SEEN_H
#define DC_SEEN_H

#include <stddef.h>
#include <stdint.h>

#include "frontier.h"

/*
 * The seen-set alone (batch dedup: `dcrawl dedup`). Same keys and members as
 * frontier_admit, so a URL marked here is "seen" to admit and vice versa.
 * Only url->host, hostlen and fp are read. check_only == 0: insert if
 * absent, isnew[i] = 1 exactly when this call inserted it (a URL twice in
 * one batch is new once). check_only != 0: isnew[i] = 1 when absent,
 * nothing written. Nothing is queued. One pipelined round trip.
 */
int seen_batch(struct frontier *f, const struct frontier_url *urls, size_t n,
               int check_only, unsigned char *isnew);

/*
 * Seen-set layout in use, as one line of text in out. Returns 1 when the
 * layout is b256-i64 and this Redis's set-max-intset-entries is below what
 * it is sized for, or cannot be read (a caller logs the line then), else 0.
 */
int seen_layout(const struct frontier *f, char *out, size_t cap);
/* The layout's name as recorded in <prefix>:meta seen_layout: "mod-u64"
 * (the dcrawl-seen module) or "b256-i64" (Lua over intset buckets).
 * Static storage. */
const char *seen_layout_name(const struct frontier *f);

/* Size of the seen-set, from SCARD, MEMORY USAGE and OBJECT ENCODING of
 * the bucket keys (pipelined, 8192 keys per round trip): every key when
 * sample is 0, else about `sample` evenly spread keys, the figures then
 * extrapolated to all `total` keys (sampled < total). */
struct seen_usage {
    uint64_t members, bytes, keys, not_compact;
    uint64_t sampled, total;
};
int seen_usage(struct frontier *f, size_t sample, struct seen_usage *u);

#endif
