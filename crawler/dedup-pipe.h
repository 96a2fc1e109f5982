/*
 * dedup-pipe.h: the pipeline behind `dcrawl dedup` (crawler/dedup-pipe.c),
 * for cmd-dedup.c only.
 */
#ifndef DCRAWL_DEDUP_PIPE_H
#define DCRAWL_DEDUP_PIPE_H

#include <stdint.h>
#include <stdio.h>

struct frontier;
struct dedup_cache;

/* Counts over every input of one run (the caller prints them). */
struct dd_totals {
    uint64_t read, fresh, seen, bad;
};

struct dd_input {
    FILE *in;          /* read to its end; the caller closes it */
    const char *name;  /* in "NAME:LINE: reason: text" of bad lines */
    int jobs;          /* canonicalizing threads, >= 1 */
    int check_only;    /* ask Redis without marking */
    unsigned url_flags;    /* parser_url_canon flags */
    size_t url_max_length;
};

/*
 * Answer one input: its new URLs (canonical, input order) go to `out`, bad
 * lines to stderr, counts into *t. The frontier and the cache are used by
 * one thread at a time. Returns DC_OK, DC_EIO (reading or writing failed)
 * or DC_EREDIS (frontier_errstr(f) says why).
 */
int dd_pipe_run(struct frontier *f, struct dedup_cache *cache,
                const struct dd_input *di, FILE *out, struct dd_totals *t);

#endif
