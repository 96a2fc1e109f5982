/*
 * digest.c: content dedup. The first URL whose payload has a given digest
 * claims it; a later URL with the same digest is a content duplicate of
 * that first one (archived as a WARC revisit, its links not followed).
 *
 * Layout: <prefix>:{dg<XX>}:d, a HASH digest -> "<ms>\t<uri>", where XX is
 * the digest's last base32 character pair, so the 1024 hashes spread over
 * Redis Cluster slots. One pipeline per batch: HSETNX then HGET per digest
 * (HGET answers with our own value when we claimed it, else the first
 * claimant's). A URL fetched again (after a node died) finds its own claim
 * and is not its own duplicate.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "frontier-internal.h"
#include "frontier.h"

static void digest_key(struct frontier *f, struct frontier_strv *a,
                       const char *digest)
{
    size_t n = strlen(digest);
    const char *tail = n >= 2 ? digest + n - 2 : "00";
    frontier__strv_pushf(a, "%s:{dg%.2s}:d", f->prefix, tail);
}

int frontier_digest_claim(struct frontier *f, const char *const *digest,
                          const char *const *uri, const int64_t *ms, size_t n,
                          unsigned char *isdup, char **orig_uri,
                          int64_t *orig_ms)
{
    struct frontier_call *calls;
    redisReply **rep;
    size_t i;
    int rc;

    if (!n)
        return DC_OK;
    calls = xcalloc(2 * n, sizeof(*calls));
    rep = xcalloc(2 * n, sizeof(*rep));
    for (i = 0; i < n; i++) {
        struct frontier_call *c = &calls[2 * i];
        frontier__call_init(c, -1);
        frontier__strv_pushs(&c->args, "HSETNX");
        digest_key(f, &c->args, digest[i]);
        frontier__strv_pushs(&c->args, digest[i]);
        frontier__strv_pushf(&c->args, "%lld\t%s", (long long)ms[i], uri[i]);
        c = &calls[2 * i + 1];
        frontier__call_init(c, -1);
        frontier__strv_pushs(&c->args, "HGET");
        digest_key(f, &c->args, digest[i]);
        frontier__strv_pushs(&c->args, digest[i]);
    }
    rc = frontier__run(f, calls, 2 * n, rep);
    for (i = 0; !rc && i < n; i++) {
        redisReply *r = rep[2 * i + 1];
        const char *tab = r && r->type == REDIS_REPLY_STRING
                              ? memchr(r->str, '\t', r->len) : NULL;
        isdup[i] = 0;
        orig_uri[i] = NULL;
        orig_ms[i] = ms[i];
        if (!tab)
            continue; /* unexpected: treat as not a duplicate */
        orig_ms[i] = strtoll(r->str, NULL, 10);
        orig_uri[i] = xstrndup(tab + 1, r->len - (size_t)(tab + 1 - r->str));
        isdup[i] = strcmp(orig_uri[i], uri[i]) != 0;
    }
    frontier__replies_free(rep, 2 * n);
    free(rep);
    frontier__calls_free(calls, 2 * n);
    return rc;
}
