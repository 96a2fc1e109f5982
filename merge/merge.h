/*
 * merge.h: merging the crawl's output. Every node writes per-depth WARC
 * files and JSON lines (the format and its writer/reader live in warc/,
 * warc/warc.h); merge_run() reads every .jsonl and .warc.gz under
 * DIR/depth-N of every node (plus foreign WARC files given with
 * merge_opts.adds) and writes merged/depth-D.warc.gz, merged/pages.jsonl,
 * merged/index.cdxj and merged/summary.json.
 *
 * What a merge keeps: one page per URL (the latest fetch), each page's
 * score (in-links, counted from the per-node lines' "outlinks"), and per
 * group of identical payloads one full response (merge_opts.keep chooses
 * which) while the others become revisit records. Merged lines drop
 * "outlinks" and carry "score" instead. merge_run copies a line's records
 * as raw bytes (warc_offset, warc_length); lines without warc_length (older
 * output) are located by inflating their file and matching warc_record_id.
 * See merge.c for the passes and the files that hold them.
 */
#ifndef DC_MERGE_H
#define DC_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dc-limits.h"

/* --------------------------------------------------------------- merge */

/* Which copy of a content duplicate group (same payload digest under
 * several URLs) stays a full response; the others become revisits. */
enum merge_keep {
    MERGE_KEEP_SCORE = 0,  /* highest score (in-links), then shortest URL */
    MERGE_KEEP_SHORTEST    /* shortest URL, then highest score */
};

struct merge_opts {
    const char *outdir;        /* DIR/merged when NULL */
    enum merge_keep keep;
    const char *const *adds;   /* foreign WARC files to merge (depth 0) */
    size_t nadds;
    size_t mem_bytes;          /* sort buffer budget; 0: 64 MB */
    const char *tmpdir;        /* sort runs; NULL: outdir */
};

struct merge_stats {
    uint64_t files, records, pages, url_duplicates, torn, depths;
    uint64_t skipped;  /* pages kept whose line is "skipped" (no request) */
    uint64_t pages_per_depth[DC_DEPTHS];
    uint64_t ranges;   /* pages copied as raw byte ranges */
    uint64_t inflated; /* pages located by inflating their file (no range,
                          or a range that failed the check) */
    uint64_t content_duplicates; /* pages written as revisits */
    uint64_t revisits_built;     /* ... of which merge built the record */
    uint64_t added_files, added_pages, added_bad; /* --add files */
    uint64_t bytes_in, bytes_out; /* WARC bytes read (ranges) / written */
    uint64_t status[6];           /* status / 100; [0]: none or odd */
    uint64_t runs;                /* sorted runs spilled to disk */
};

/* Merge DIR's per-depth output (and o->adds) into o->outdir. Warnings
 * (torn records, bad lines, broken foreign files) go to `warn` when not
 * NULL. `torn` counts torn records: per page for ranges past the end of
 * their file, per file for a torn end found while inflating. Returns
 * DC_OK, DC_EOUTPUT when an output or sort run cannot be written (disk
 * full: err is "PATH: reason"), or another error; on any error nothing
 * is published and an earlier output in o->outdir is left as it was. */
int merge_run_opts(const char *dir, const struct merge_opts *o,
                   struct merge_stats *st, FILE *warn, char *err,
                   size_t errlen);
/* merge_run_opts with default options and the given outdir. */
int merge_run(const char *dir, const char *outdir, struct merge_stats *st,
              FILE *warn, char *err, size_t errlen);

#endif
