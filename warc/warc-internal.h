/*
 * warc-internal.h: helpers shared by the files of the warc module.
 *
 * Code outside of the warc module should use only the public functions
 * defined in "warc.h", and should *not* include this file.
 *
 * Contents: limits for reading hostile input, random record ids, gzip
 * members, the header block of a record and its member (record.c; build.c
 * uses them for a page's records), the metadata record (build.c; the
 * writer appends it) and the JSON line of a page (line.c).
 * Everything here is reentrant; nothing prints.
 */
#ifndef DC_WARC_INTERNAL_H
#define DC_WARC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "warc.h"

/* Limits for reading hostile input. */
#define WARC_HEADER_MAX ((size_t)64 * 1024)      /* WARC header block */
#define WARC_RECORD_MAX ((uint64_t)1 << 30)      /* one record block */

/* Digests are formatted by dedup (dedup_sha1_base32, dedup_sha1_format:
 * "sha1:" + 32 base32 characters), the one place the format lives. */

/* A new random (version 4) "<urn:uuid:...>" id; out holds >= 48 bytes. */
void warc__record_id(char *out, size_t cap);

/* Append one gzip member holding the concatenation of parts to out. */
struct warc__part {
    const void *data;
    size_t len;
};
int warc__gzip_member(struct warc_buf *out, int level,
                      const struct warc__part *parts, size_t nparts);

/* What goes into one WARC record's header block. */
struct warc__rec_head {
    const char *type, *id, *date, *uri, *ip, *concurrent, *ctype;
    const char *filename, *block_digest, *payload_digest;
    const char *profile, *refers_uri, *refers_date; /* revisit */
    const char *refers_id;  /* WARC-Refers-To */
    int truncated;
    size_t len;
};

/* One record as one gzip member appended to out: r's header block, the
 * block (two pieces, b1 then b2; either may be empty), CRLF CRLF. */
int warc__rec_member(struct warc_buf *out, int level,
                     const struct warc__rec_head *r, const void *b1, size_t n1,
                     const void *b2, size_t n2);

/* One application/warc-fields record: r (type, id, date, uri, ...) with
 * the block blk, whose digest and length it fills in; frees blk. */
int warc__fields_member(struct warc_buf *out, int level,
                        struct warc__rec_head *r, struct warc_buf *blk);

/* Append "name: URI\r\n" with controls, space, DEL and non-ASCII bytes of
 * the URI percent-encoded; nothing for a NULL or empty URI. */
void warc__add_uri_field(struct warc_buf *h, const char *name, const char *u);

/* The metadata record of page p whose response is b->response_id
 * (outlinks, link and noise counts), appended to out (build.c). */
int warc__metadata_member(struct warc_buf *out, int level,
                          const struct warc_page *p,
                          const struct warc_built *b);

/* The JSON line of page p (line.c), its records b (or NULL) written at
 * offset off of warc_file, followed by a metadata member of meta_len
 * bytes; appended to j, ending in "\n". */
void warc__page_line(struct warc_buf *j, const struct warc_page *p,
                     const struct warc_built *b, const char *node,
                     const char *warc_file, int64_t off, size_t meta_len);

#endif
