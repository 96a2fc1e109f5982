/*
 * warc.h: the crawl's output format. Each node writes, per depth, WARC
 * files and JSON lines; this module builds, writes and reads them, and
 * gives the CDXJ key (SURT) and the JSON helpers that merge/ uses to
 * rewrite them. It knows nothing about merging (merge/merge.h) or crawling.
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
 * warc_record_build() (reentrant: SHA-1 digests, gzip) turns a fetched page
 * into ready-to-append bytes, and warc_writer_append() (one thread per
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
 * e2e checker, warc_record_verify) agrees. The digest of a content-decoded
 * body is not what the standard asks for and is not written.
 *
 * metadata record (Content-Type application/warc-fields, WARC-Concurrent-To
 * and WARC-Refers-To naming the response): one "outlink: URL" line per
 * extracted canonical link, then links-found, links-new, noise-links-seen,
 * noise-dropped-block, noise-dropped-cluster, noise-refused-budget.
 *
 * JSON line fields about the records: warc_file (relative to DIR),
 * warc_offset (the response's gzip member), warc_length (bytes of the
 * page's members: response, request, metadata, contiguous from
 * warc_offset), warc_response_length (the response member alone) and
 * warc_record_id (the response's WARC-Record-ID); all null for a page
 * without records. Per-node lines also carry "outlinks" (array of the
 * page's canonical links, empty for a content duplicate).
 *
 * Files: record.c (digests, ids, times, gzip members, record headers),
 * build.c (a page's records), writer.c (per-depth files, rotation, the
 * JSON line), reader.c (reading, verifying), json.c (JSON strings, flat
 * JSON objects, growable buffer), surt.c (CDXJ keys).
 * Everything is reentrant except a writer or reader, which is used by one
 * thread at a time; nothing prints.
 */
#ifndef DC_WARC_H
#define DC_WARC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- writing */

/* One fetched page, as the crawler hands it to the output. Pointers are
 * borrowed for the duration of the call. */
struct warc_page {
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
    /* The payload's digest ("sha1:" base32) when known, or NULL: a revisit
     * record (dup_of_uri) then needs no body, which a caller holding the
     * page's built records may already have freed. */
    const char *payload_digest;
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
struct warc_built {
    unsigned char *data;   /* owned; freed by warc_built_release */
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
int warc_record_build(const struct warc_page *p, int gzip_level,
                      struct warc_built *out);
void warc_built_release(struct warc_built *b);

struct warc_writer;

struct warc_writer_opts {
    const char *software;    /* "dcrawl/0.1" for warcinfo */
    const char *settings;    /* free text for warcinfo (crawl settings) */
    int64_t max_bytes;       /* rotate WARC after this many bytes */
    int gzip_level;
    int buffered;            /* appends wait for warc_writer_flush (or
                                WARC_WRITER_BUF bytes) */
};
/* A buffered writer writes by itself once this many bytes wait. */
#define WARC_WRITER_BUF ((size_t)1 << 20)

/* Open the writer for one depth of one node under dir; the depth's
 * directory and the files are created lazily on the first append.
 * DC_EINVAL for a bad argument. */
int warc_writer_open(struct warc_writer **w, const char *dir, int depth,
                     const char *node_id, const struct warc_writer_opts *o);
/* Append built records, p's metadata record (when b has records) and p's
 * JSON line; p->... plus b->digest go into the JSON line with the file name
 * and offset. Unbuffered, both go to the kernel (write(2)) before it
 * returns, so a crash leaves at most one torn record. On a write error (disk full,
 * quota, I/O error) both files are cut back to where the page began (they
 * end with the last complete record and line) and DC_EIO is returned; the
 * error is sticky: every later append returns it too. */
int warc_writer_append(struct warc_writer *w, const struct warc_page *p,
                       const struct warc_built *b, const char *node_id);
/* Buffered (opts.buffered): appends only fill the writer's buffers (the
 * offsets in the lines are final) and warc_writer_flush hands everything
 * appended since the last flush to the kernel, records first, then their
 * lines (two write(2) calls for any number of pages). On a write error
 * both files are cut back to where the last flush left them (every page
 * since is gone, none torn) and the sticky DC_EIO is returned. A caller
 * that must not count a page as written before it is on disk (the node
 * completes its lease) flushes first. Unbuffered writers: a no-op. */
int warc_writer_flush(struct warc_writer *w);
/* Bytes of page records (response, request, metadata) w appended to its
 * WARC files so far (warcinfo records apart); 0 for NULL. */
uint64_t warc_writer_bytes(const struct warc_writer *w);
/* The writer's first error as one line, "PATH: reason" (strerror), e.g.
 * "out/depth-1/n1-00000.warc.gz: No space left on device"; "" when none
 * or w is NULL. Valid until the writer is closed. */
const char *warc_writer_errmsg(const struct warc_writer *w);
/* Flush, then close the current files (a later append starts a new pair). Returns
 * the writer's first error, if any (its message: warc_writer_errmsg);
 * NULL ok. */
int warc_writer_end(struct warc_writer *w);
/* Close files, free, NULL the pointer; NULL ok. Returns the first write
 * error seen, if any. */
int warc_writer_close(struct warc_writer **w);

/* ------------------------------------------------------------- reading */

struct warc_reader;

struct warc_record {
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
int warc_reader_open(struct warc_reader **r, const char *path);
/*
 * Next record into *rec (valid until the next call). Returns DC_OK,
 * DC_ENOTFOUND at the end, DC_ETRUNCATED when the last record is torn (the
 * reader stops there), DC_EPARSE for a malformed record (stops).
 */
int warc_reader_next(struct warc_reader *r, struct warc_record *rec);
/* Copy the current record's raw gzip member (compressed bytes) to f. */
int warc_reader_copy_raw(struct warc_reader *r, FILE *f);
void warc_reader_close(struct warc_reader **r);

/* Verify rec's WARC-Block-Digest and WARC-Payload-Digest (when present).
 * DC_OK or DC_EDIGEST. */
int warc_record_verify(const struct warc_record *rec);

/* ---------------------------------------------------------------- CDXJ */

/* The SURT form of url as pywb's CDXJ keys use it ("com,example)/a?b=1"):
 * scheme and "www." dropped, host labels reversed and comma-joined (an IP
 * address is kept as it is), default
 * port dropped, lower-cased, query arguments sorted, fragment dropped.
 * Returns the bytes needed (excluding NUL); out is truncated to cap. */
size_t warc_surt(const char *url, char *out, size_t cap);

/* ------------------------------------------------------------ JSON out */

/* Append s as a JSON string (quoted, escaped) to the buffer *buf of
 * length *len and capacity *cap (grown with xrealloc). */
void warc_json_str(char **buf, size_t *len, size_t *cap, const char *s);

/* ------------------------------------------------- building blocks */
/* For tools that rewrite this module's output (merge/): a growable buffer,
 * time stamps, flat JSON objects and single records built from parts. */

/* Growable byte buffer; zero-initialize, free p when done. */
struct warc_buf {
    char *p;
    size_t len, cap;
};
void warc_buf_add(struct warc_buf *b, const void *data, size_t n);
void warc_buf_str(struct warc_buf *b, const char *s);
void warc_buf_printf(struct warc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ms since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC); cap >= 32. */
void warc_iso_time(int64_t ms, char *out, size_t cap);
/* Parse "YYYY-MM-DDTHH:MM:SS[.fraction]Z" into ms; DC_OK or DC_EPARSE. */
int warc_parse_iso(const char *s, int64_t *ms);

/* Build the gzip member of a warcinfo record for file name `filename`. */
int warc_warcinfo(struct warc_buf *out, const char *filename,
                  const char *software, const char *settings, int level);

/* mkdir -p path (mode 0777 before umask). DC_OK, DC_EINVAL, DC_EIO. */
int warc_mkdirs(const char *path);

/* ------------------------------------------------------ flat JSON objects */

enum warc_jtype { WARC_JNULL, WARC_JBOOL, WARC_JNUM, WARC_JSTR, WARC_JARR };

struct warc_jkv {
    char *key;              /* decoded key (owned) */
    enum warc_jtype type;
    char *str;              /* decoded string value (WARC_JSTR), owned */
    double num;             /* WARC_JNUM */
    int boolean;            /* WARC_JBOOL */
    const char *raw;        /* the value's JSON text inside the line */
    size_t raw_len;
    const char *raw_key;    /* the key's, quotes included */
    size_t raw_key_len;
};

struct warc_jobj {
    struct warc_jkv *kv;
    size_t n, cap;
    char *arena;            /* the decoded keys and strings, one block */
    size_t used;
};

/* Parse one JSON object whose values are strings, numbers, booleans,
 * null or arrays of those (WARC_JARR: only raw/raw_len are set; read its
 * strings with warc_json_array_next) from line[0..len). Surrounding
 * white space allowed. DC_OK or DC_EPARSE; o is filled (raw pointers into line,
 * decoded keys and strings in one block of o's) and must be released with
 * warc_jobj_release even on error. */
int warc_json_parse(const char *line, size_t len, struct warc_jobj *o);
void warc_jobj_release(struct warc_jobj *o);
/* The value of key, or NULL. */
const struct warc_jkv *warc_jobj_get(const struct warc_jobj *o,
                                     const char *key);

/* The next string of the array raw[0..len) (a WARC_JARR value) after
 * position *pos (0 to start): DC_OK with *out malloc'd, DC_ENOTFOUND at the
 * end, DC_EPARSE. Non-string elements are skipped. */
int warc_json_array_next(const char *raw, size_t len, size_t *pos, char **out);

/* ------------------------------------------------------ record building */

/* The gzip member of a revisit record (profile identical-payload-digest)
 * whose block is the HTTP header block head[0..head_len). */
struct warc_revisit {
    const char *id, *date, *uri, *ip, *payload_digest;
    const char *refers_uri, *refers_date, *refers_id;
    const void *head;
    size_t head_len;
};
int warc_revisit_member(struct warc_buf *out, int level,
                        const struct warc_revisit *v);

/* Every record of a page, recompressed: one gzip member of header + block
 * + CRLF CRLF (for foreign files whose records share members). */
int warc_record_member(struct warc_buf *out, int level, const void *head,
                       size_t head_len, const void *block, size_t block_len);

/* The current record's WARC header block (decompressed), and whether its
 * gzip member holds it alone (copy_raw would succeed). */
void warc_reader_head(const struct warc_reader *r,
                      const struct warc_record *rec, const unsigned char **head,
                      size_t *len);
int warc_reader_raw_ok(const struct warc_reader *r);

#endif
