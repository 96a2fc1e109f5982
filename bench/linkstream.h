/*
 * linkstream.h: the link stream the dedup benches push through the dedup
 * path, shared by dedup_bench and canon_cache. It imitates what a crawl's
 * link extractor produces: 30 % of links are to pages never seen before
 * (the next id), 70 % repeat an earlier one, drawn from a Zipf popularity
 * over all ids so far or from a Zipf over how recently an id was first
 * seen (recency_only: the latter alone). An id becomes URL text in one of
 * six shapes on one of LINKSTREAM_HOSTS hosts, 40 to 130 bytes long; the
 * variant adds a #fragment, an upper-case host or an explicit default
 * port, which canonicalization removes. Seeded: every run is the same.
 */
#ifndef DC_BENCH_LINKSTREAM_H
#define DC_BENCH_LINKSTREAM_H

#include <stdint.h>

#define LINKSTREAM_HOSTS 200000
#define LINKSTREAM_MAXURL 192

struct linkstream {
    uint64_t rng, next_id, drawn;
    int recency_only; /* repeats only by locality (cache comparison) */
};

/* A fresh stream (fixed seed). */
void linkstream_init(struct linkstream *s);
/* Next link: its page id and a spelling variant (0..3). */
uint64_t linkstream_next(struct linkstream *s, int *variant);
/* URL text of id with a variant into out (LINKSTREAM_MAXURL bytes); its
 * length. */
int linkstream_url(uint64_t id, int variant, char *out);
/* The 64-bit finalizer the stream mixes with (also a cheap hash). */
uint64_t linkstream_mix64(uint64_t x);

#endif
