/*
 * seed-ranges.c: the non-public ranges the seeds' hosts are in, for
 * scope.private_addresses=seeds.
 *
 * Seeds are loaded in batches (seeds.c); before a batch is queued, the
 * hosts it brings that were not seen before are resolved (getaddrinfo,
 * one after the other: resolvers met in tests answered concurrent
 * lookups only after a 5 s timeout, serial ones in milliseconds; an
 * address literal needs no lookup) and
 * the ranges of their non-public addresses are added to the crawl's Redis
 * meta field NETCLASS_META. Nodes read that field when they start and
 * again when they are about to refuse an address, so a node that was
 * running before the seeds came, or on another machine, allows the same
 * ranges; writing it before the seeds are queued means no node can lease
 * a seed before its range is there.
 *
 * Bounds: SEED_RANGES_HOSTS_MAX distinct hosts are looked at and the
 * lookups of one seeding stop after SEED_RANGES_BUDGET_MS; hosts left
 * over are counted (the commands say so) and allow nothing.
 *
 * The field is a union over every seeding: read, merged and written back
 * (two seedings racing can lose a range, which refuses, never allows).
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"

struct seed_ranges {
    uint64_t *seen; /* fingerprints of the host names, open addressing */
    size_t nseen, capseen;
    char **pending; /* names to resolve at the next flush */
    size_t npending, cappending;
    uint64_t mask, stored;
    size_t unresolved;
    int64_t deadline_ms; /* 0 until the first lookup */
};

struct seed_ranges *seed_ranges_new(void)
{
    struct seed_ranges *sr = xcalloc(1, sizeof(*sr));
    sr->capseen = 1024;
    sr->seen = xcalloc(sr->capseen, sizeof(*sr->seen));
    return sr;
}

void seed_ranges_free(struct seed_ranges **srp)
{
    struct seed_ranges *sr;
    if (!srp || !*srp)
        return;
    sr = *srp;
    for (size_t i = 0; i < sr->npending; i++)
        free(sr->pending[i]);
    free(sr->pending);
    free(sr->seen);
    free(sr);
    *srp = NULL;
}

/* The slot of fp, or the free slot where it would go. */
static size_t seen_slot(const struct seed_ranges *sr, uint64_t fp)
{
    size_t i;
    for (i = fp % sr->capseen; sr->seen[i]; i = (i + 1) % sr->capseen)
        if (sr->seen[i] == fp)
            break;
    return i;
}

static void seen_grow(struct seed_ranges *sr)
{
    uint64_t *old = sr->seen;
    size_t oldcap = sr->capseen;
    sr->capseen *= 2;
    sr->seen = xcalloc(sr->capseen, sizeof(*sr->seen));
    for (size_t i = 0; i < oldcap; i++)
        if (old[i])
            sr->seen[seen_slot(sr, old[i])] = old[i];
    free(old);
}

/* Insert fp: 1 when new, 0 when there already, -1 when new but the set
 * is full (SEED_RANGES_HOSTS_MAX). */
static int seen_insert(struct seed_ranges *sr, uint64_t fp)
{
    size_t i;
    fp |= 1; /* 0 marks a free slot */
    i = seen_slot(sr, fp);
    if (sr->seen[i])
        return 0;
    if (sr->nseen >= SEED_RANGES_HOSTS_MAX)
        return -1;
    if ((sr->nseen + 1) * 2 > sr->capseen) {
        seen_grow(sr);
        i = seen_slot(sr, fp);
    }
    sr->seen[i] = fp;
    sr->nseen++;
    return 1;
}

void seed_ranges_add(struct seed_ranges *sr, const char *host, size_t hostlen)
{
    char name[256];
    size_t n = hostlen;
    int c;
    if (host[0] == '[') { /* "[v6]:port" */
        const char *end = memchr(host, ']', hostlen);
        host++;
        n = end ? (size_t)(end - host) : hostlen - 1;
    } else {
        const char *colon = memchr(host, ':', hostlen);
        if (colon)
            n = (size_t)(colon - host);
    }
    if (!n || n >= sizeof(name))
        return;
    memcpy(name, host, n);
    name[n] = '\0';
    switch (seen_insert(sr, dedup_fingerprint(name, n))) {
    case 0:
        return;
    case -1: /* past the cap: counted per URL, so at most this many hosts */
        sr->unresolved++;
        return;
    }
    c = netclass_of_text(name);
    if (c >= 0)
        sr->mask |= (uint64_t)1 << c;
    if (c != NETCLASS_OTHER)
        return; /* an address literal is its own answer */
    if (n >= 8 && !strcasecmp(name + n - 8, ".invalid"))
        return; /* never resolves (RFC 6761) */
    xgrow((void **)&sr->pending, &sr->cappending, sr->npending + 1,
          sizeof(*sr->pending));
    sr->pending[sr->npending++] = xstrdup(name);
}

/* The ranges of name's non-public addresses (0: none, or no answer). */
static uint64_t resolve_one(const char *name)
{
    struct addrinfo hints, *res = NULL, *a;
    uint64_t mask = 0;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(name, NULL, &hints, &res) != 0)
        return 0;
    for (a = res; a; a = a->ai_next) {
        int c = netclass_of(a->ai_addr);
        if (c >= 0)
            mask |= (uint64_t)1 << c;
    }
    freeaddrinfo(res);
    return mask;
}

void seed_ranges_resolve(struct seed_ranges *sr)
{
    size_t i;
    if (!sr->npending)
        return;
    if (!sr->deadline_ms)
        sr->deadline_ms = dc_now_ms() + SEED_RANGES_BUDGET_MS;
    for (i = 0; i < sr->npending; i++) {
        if (dc_now_ms() < sr->deadline_ms)
            sr->mask |= resolve_one(sr->pending[i]);
        else
            sr->unresolved++;
        free(sr->pending[i]);
    }
    sr->npending = 0;
}

int seed_ranges_flush(struct seed_ranges *sr, struct frontier *f)
{
    char have[1024], text[1024];
    uint64_t m;
    int rc;
    seed_ranges_resolve(sr);
    if (!(sr->mask & ~sr->stored))
        return DC_OK;
    rc = frontier_meta_get(f, NETCLASS_META, have, sizeof(have));
    if (rc && rc != DC_ENOTFOUND)
        return rc;
    m = sr->mask | (rc ? 0 : netclass_mask_parse(have));
    netclass_mask_format(m, text, sizeof(text));
    rc = frontier_meta_set(f, NETCLASS_META, text);
    if (!rc)
        sr->stored = sr->mask = m;
    return rc;
}

uint64_t seed_ranges_mask(const struct seed_ranges *sr)
{
    return sr->mask;
}

size_t seed_ranges_unresolved(const struct seed_ranges *sr)
{
    return sr->unresolved;
}
