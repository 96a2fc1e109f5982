/*
 * merge.h: the crawl's output: per-depth WARC + JSON lines written by each
 * node, read back, and merged across depths and nodes.
 *
 * Layout written by a node (node id N, file sequence S, depth D):
 *   DIR/depth-D/N-S.warc.gz   WARC/1.1, one gzip member per record: a
 *                             warcinfo record first, then per page a
 *                             response (or revisit), a request and a
 *                             metadata record, contiguous
 *   DIR/depth-D/N-S.jsonl     one JSON object per fetched URL
 * S starts at the first number whose files do not exist yet, so a restarted
 * node never overwrites; files rotate at output.warc_max_bytes.
 *
 * Writing is split so the expensive part runs on worker threads:
 * merge_record_build() (reentrant: SHA-1 digests, gzip) turns a fetched page
 * into ready-to-append bytes, and merge_writer_append() (one thread per
 * writer) appends them, the page's metadata record (outlinks and noise
 * decisions, known only after link admission) and the JSON line.
 *
 * The response record's block is the HTTP header block as received followed
 * by the body as transferred (content-coding kept, transfer-coding removed:
 * a "Transfer-Encoding: chunked" header is dropped and Content-Length set to
 * the stored body's length). WARC-Block-Digest is the SHA-1 of the whole
 * block, WARC-Payload-Digest the SHA-1 of the body, both "sha1:" + base32.
 *
 * Which bytes the payload digest covers: WARC 1.1 (section 5.9) defines the
 * payload of an application/http block as its "entity-body" per RFC 2616,
 * i.e. the message body with any transfer-coding (chunked) removed and any
 * content-coding (gzip, br) kept. That is "the decoded entity" in the WARC
 * sense, and exactly the bytes stored after the HTTP header block here, so
 * a reader that hashes what follows the header block (warcio's check, the
 * e2e checker, merge_record_verify) agrees. The digest of a content-decoded
 * body is not what the standard asks for and is not written.
 *
 * metadata record (Content-Type application/warc-fields, WARC-Concurrent-To
 * and WARC-Refers-To naming the response): one "outlink: URL" line per
 * extracted canonical link, then links-found, links-new, noise-links-seen,
 * noise-dropped-block, noise-dropped-cluster, noise-refused-budget.
 *
 * merge_run() reads every .jsonl and .warc.gz under DIR/depth-N of every node
 * (plus foreign WARC files given with merge_opts.adds) and writes
 * merged/depth-D.warc.gz, merged/pages.jsonl, merged/index.cdxj and
 * merged/summary.json. See merge.c for the passes and policies.
 *
 * JSON line fields about the records: warc_file (relative to DIR),
 * warc_offset (the response's gzip member), warc_length (bytes of the
 * page's members: response, request, metadata, contiguous from
 * warc_offset), warc_response_length (the response member alone) and
 * warc_record_id (the response's WARC-Record-ID); all null for a page
 * without records. Per-node lines also carry "outlinks" (array of the
 * page's canonical links, empty for a content duplicate): merge computes
 * each URL's score (in-links) from them. Merged lines drop "outlinks" and
 * carry "score" instead. merge_run copies a line's range as raw bytes;
 * lines without warc_length (older output) are located by inflating their
 * file and matching warc_record_id.
 */
#ifndef DC_MERGE_H
#define DC_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dc-limits.h"

/* ------------------------------------------------------------- writing */

/* One fetched page, as the crawler hands it to the output. Pointers are
 * borrowed for the duration of the call. */
struct merge_page {
    const char *url;       /* canonical URL that was requested */
    const char *final_url; /* URL of the last response (after redirects) */
    const char *ip;        /* server IP address, or NULL */
    int64_t fetched_ms;    /* wall-clock ms when the request started */
    int depth;
    int status;            /* HTTP status of the final response, 0 on error */
    const char *content_type; /* or NULL */
    const char *request;   /* request header block as sent */
    size_t request_len;
    const char *resp_head; /* final response's header block as received */
    size_t resp_head_len;
    const char *body;      /* payload as transferred (content-coded) */
    size_t body_len;
    size_t decoded_len;    /* length after content decoding */
    size_t links_found;
    size_t links_new;
    /* noise decisions on this page's links (noise.h) */
    size_t noise_seen, noise_block, noise_cluster, noise_budget;
    const char *error;     /* transport error text, or NULL */
    /* A URL given up without a request (robots.txt disallowed or
     * unreachable): the reason, written as "skipped"; status 0, no
     * records, fetched_ms the time of the decision. NULL otherwise. */
    const char *skipped;
    int truncated;         /* body cut at fetch.max_bytes */
    /* Content duplicate: the payload was seen before at dup_of_uri, fetched
     * at dup_of_ms. Then a `revisit` record (profile identical-payload-
     * digest, block = the HTTP headers only) is written instead of the
     * response, and the JSON line has duplicate_of. */
    const char *dup_of_uri;
    int64_t dup_of_ms;
    /* The page's extracted canonical links (written to the metadata record
     * and the JSON line's "outlinks"); may be NULL with noutlinks 0. */
    const char *const *outlinks;
    size_t noutlinks;
    /* JSON line only: a 3xx's target ("redirect_to"), the page's
     * rel=canonical ("canonical") and meta refresh target ("refresh"),
     * each NULL when none; meta robots noindex ("noindex"). */
    const char *redirect_to;
    const char *canonical;
    const char *refresh;
    int noindex;
};

/* Bytes ready to append: the gzip members of the page's records. */
struct merge_built {
    unsigned char *data;   /* owned; freed by merge_built_release */
    size_t len;
    char digest[40];       /* payload digest "sha1:..." ("" if no records) */
    char response_id[64];  /* "<urn:uuid:...>" of the response record */
    size_t response_off;   /* offset of the response member within data */
    size_t response_len;   /* its compressed length */
};

/*
 * Build the request + response records of p (none for a transport error:
 * then len is 0 and only the JSON line is written). gzip_level 0..9.
 * Reentrant. Returns DC_OK, or DC_EINVAL for a page without url.
 */
int merge_record_build(const struct merge_page *p, int gzip_level,
                       struct merge_built *out);
void merge_built_release(struct merge_built *b);

struct merge_writer;

struct merge_writer_opts {
    const char *software;    /* "dcrawl/0.1" for warcinfo */
    const char *settings;    /* free text for warcinfo (crawl settings) */
    int64_t max_bytes;       /* rotate WARC after this many bytes */
    int gzip_level;
};

/* Open the writer for one depth of one node under dir (created if needed);
 * files are created lazily on first append. */
int merge_writer_open(struct merge_writer **w, const char *dir, int depth,
                      const char *node_id, const struct merge_writer_opts *o);
/* Append built records, p's metadata record (when b has records) and p's
 * JSON line; p->... plus b->digest go into the JSON line with the file name
 * and offset. Flushes both files at the end of
 * each page so a crash leaves at most one torn record. */
int merge_writer_append(struct merge_writer *w, const struct merge_page *p,
                        const struct merge_built *b, const char *node_id);
/* Close files, free, NULL the pointer; NULL ok. Returns the first write
 * error seen, if any. */
int merge_writer_close(struct merge_writer **w);

/* ------------------------------------------------------------- reading */

struct merge_reader;

struct merge_record {
    char type[24];             /* warcinfo, request, response, revisit, ... */
    char *target_uri;          /* WARC-Target-URI or NULL (owned by reader) */
    char *record_id;
    char *date;                /* WARC-Date */
    char *concurrent_to;
    char *payload_digest;
    char *block_digest;
    const unsigned char *block; /* the record block (decompressed) */
    size_t block_len;
    uint64_t offset;           /* offset of the record's gzip member in file */
    uint64_t member_len;       /* compressed length of the member */
};

/* Open a .warc.gz (one member per record) or plain .warc file. */
int merge_reader_open(struct merge_reader **r, const char *path);
/*
 * Next record into *rec (valid until the next call). Returns DC_OK,
 * DC_ENOTFOUND at the end, DC_ETRUNCATED when the last record is torn (the
 * reader stops there), DC_EPARSE for a malformed record (stops).
 */
int merge_reader_next(struct merge_reader *r, struct merge_record *rec);
/* Copy the current record's raw gzip member (compressed bytes) to f. */
int merge_reader_copy_raw(struct merge_reader *r, FILE *f);
void merge_reader_close(struct merge_reader **r);

/* Verify rec's WARC-Block-Digest and WARC-Payload-Digest (when present).
 * DC_OK or DC_EDIGEST. */
int merge_record_verify(const struct merge_record *rec);

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
 * their file, per file for a torn end found while inflating. */
int merge_run_opts(const char *dir, const struct merge_opts *o,
                   struct merge_stats *st, FILE *warn, char *err,
                   size_t errlen);
/* merge_run_opts with default options and the given outdir. */
int merge_run(const char *dir, const char *outdir, struct merge_stats *st,
              FILE *warn, char *err, size_t errlen);

/* The SURT form of url as pywb's CDXJ keys use it ("com,example)/a?b=1"):
 * scheme and "www." dropped, host labels reversed and comma-joined (an IP
 * address is kept as it is), default
 * port dropped, lower-cased, query arguments sorted, fragment dropped.
 * Returns the bytes needed (excluding NUL); out is truncated to cap. */
size_t merge_surt(const char *url, char *out, size_t cap);

/* ------------------------------------------------------------ JSON out */

/* Append s as a JSON string (quoted, escaped) to the buffer *buf of
 * length *len and capacity *cap (grown with xrealloc). */
void merge_json_str(char **buf, size_t *len, size_t *cap, const char *s);

#endif
