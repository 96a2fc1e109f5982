/*
 * merge-internal.h: helpers shared by the files of the merge module.
 *
 * Code outside of the merge module should use only the public functions
 * defined in "merge.h", and should *not* include this file.
 *
 * Contents: a growable byte buffer, digests (SHA-1 as "sha1:" + base32),
 * random record ids, ISO 8601 time stamps, gzip members, the warcinfo
 * record, and a parser for flat JSON objects (one JSON line of pages.jsonl).
 * Everything here is reentrant; nothing prints.
 */
#ifndef DC_MERGE_INTERNAL_H
#define DC_MERGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"

/* Limits for reading hostile input. */
#define MERGE_HEADER_MAX ((size_t)64 * 1024)      /* WARC header block */
#define MERGE_RECORD_MAX ((uint64_t)1 << 30)      /* one record block */

/* Growable byte buffer; zero-initialize, free p when done. */
struct merge__buf {
    char *p;
    size_t len, cap;
};
void merge__buf_add(struct merge__buf *b, const void *data, size_t n);
void merge__buf_str(struct merge__buf *b, const char *s);
void merge__buf_printf(struct merge__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Digests are formatted by dedup (dedup_sha1_base32, dedup_sha1_format:
 * "sha1:" + 32 base32 characters), the one place the format lives. */

/* A new random (version 4) "<urn:uuid:...>" id; out holds >= 48 bytes. */
void merge__record_id(char *out, size_t cap);

/* ms since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC); cap >= 32. */
void merge__iso_time(int64_t ms, char *out, size_t cap);
/* Parse "YYYY-MM-DDTHH:MM:SS[.fraction]Z" into ms; DC_OK or DC_EPARSE. */
int merge__parse_iso(const char *s, int64_t *ms);

/* Append one gzip member holding the concatenation of parts to out. */
struct merge__part {
    const void *data;
    size_t len;
};
int merge__gzip_member(struct merge__buf *out, int level,
                       const struct merge__part *parts, size_t nparts);

/* Build the gzip member of a warcinfo record for file name `filename`. */
int merge__warcinfo(struct merge__buf *out, const char *filename,
                    const char *software, const char *settings, int level);

/* mkdir -p path (mode 0777 before umask). DC_OK, DC_EINVAL, DC_EIO. */
int merge__mkdirs(const char *path);

/* ------------------------------------------------------ flat JSON objects */

enum merge__jtype { MJ_NULL, MJ_BOOL, MJ_NUM, MJ_STR, MJ_ARR };

struct merge__jkv {
    char *key;              /* decoded key (owned) */
    enum merge__jtype type;
    char *str;              /* decoded string value (MJ_STR), owned */
    double num;             /* MJ_NUM */
    int boolean;            /* MJ_BOOL */
    const char *raw;        /* the value's JSON text inside the line */
    size_t raw_len;
};

struct merge__jobj {
    struct merge__jkv *kv;
    size_t n, cap;
};

/* Parse one JSON object whose values are strings, numbers, booleans,
 * null or arrays of those (MJ_ARR: only raw/raw_len are set; read its
 * strings with merge__json_array_next) from line[0..len). Surrounding white space allowed.
 * DC_OK or DC_EPARSE; o is filled (raw pointers into line) and must be
 * released with merge__jobj_release even on error. */
int merge__json_parse(const char *line, size_t len, struct merge__jobj *o);
void merge__jobj_release(struct merge__jobj *o);
/* The value of key, or NULL. */
const struct merge__jkv *merge__jobj_get(const struct merge__jobj *o,
                                         const char *key);

/* The next string of the array raw[0..len) (an MJ_ARR value) after
 * position *pos (0 to start): DC_OK with *out malloc'd, DC_ENOTFOUND at the
 * end, DC_EPARSE. Non-string elements are skipped. */
int merge__json_array_next(const char *raw, size_t len, size_t *pos,
                           char **out);

/* ------------------------------------------------------ record building */

/* The gzip member of a revisit record (profile identical-payload-digest)
 * whose block is the HTTP header block head[0..head_len). */
struct merge__revisit {
    const char *id, *date, *uri, *ip, *payload_digest;
    const char *refers_uri, *refers_date, *refers_id;
    const void *head;
    size_t head_len;
};
int merge__revisit_member(struct merge__buf *out, int level,
                          const struct merge__revisit *v);

/* Every record of a page, recompressed: one gzip member of header + block
 * + CRLF CRLF (for foreign files whose records share members). */
int merge__record_member(struct merge__buf *out, int level,
                         const void *head, size_t head_len,
                         const void *block, size_t block_len);

/* The current record's WARC header block (decompressed), and whether its
 * gzip member holds it alone (copy_raw would succeed). */
void merge__reader_head(const struct merge_reader *r,
                        const struct merge_record *rec,
                        const unsigned char **head, size_t *len);
int merge__reader_raw_ok(const struct merge_reader *r);

#endif
