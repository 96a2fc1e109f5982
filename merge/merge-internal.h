/*
 * merge-internal.h: what the files of the merge module share: the external
 * sorter, the merger's state (struct merger), the per-line record the passes
 * carry (struct ent), and each pass's entry point.
 *
 * Code outside of the merge module should use only the public functions
 * defined in "merge.h", and should *not* include this file.
 *
 * Errors: a pass records the first fatal error with merge__fail (it keeps the
 * message in the caller's err buffer) and returns its code; warnings go
 * through merge__warn to the caller's FILE. Nothing else prints.
 */
#ifndef DC_MERGE_INTERNAL_H
#define DC_MERGE_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "merge.h"
#include "warc.h"

#define LINE_MAX_BYTES (1u << 24)
#define COPY_CHUNK ((size_t)1 << 20)
/* stdio buffer of each merged output file: a write(2) per 256 KiB, not
 * per 4 KiB */
#define OUT_BUF ((size_t)256 << 10)
#define RANGE_MAX ((int64_t)1 << 53) /* exact in a JSON number (double) */
#define NOFILE UINT32_MAX
#define HEAD_MAX ((size_t)256 << 10) /* WARC + HTTP head of a response */

/* ------------------------------------------------ external sort (sort.c) */

/*
 * Records are [u32 klen][u32 vlen][key][value], compared by memcmp of the
 * keys (shorter first on a tie). Keys are built so that this order is the
 * wanted one (big-endian numbers, NUL after strings). Fill a sorter with
 * merge__xs_add, then merge__xs_finish, then read it in order with a
 * struct xcursor; merge__xs_free removes its run files.
 */
struct run;

struct xsort {
    const char *tmpdir;
    const char *tag;
    size_t budget;
    char *buf;
    size_t len, cap;
    char **ptr;        /* records of buf, sorted */
    size_t n, capptr;
    char **paths;      /* spilled runs */
    size_t nruns;
    struct run *runs;  /* reading */
    size_t *heap, nheap;
    size_t mem_next;   /* next in-memory record when nothing spilled */
    int reading;
    uint64_t *spills;
    char why[PATH_MAX + 96]; /* a run that failed: "PATH: reason" */
};

struct xrec {
    const char *k, *v;
    size_t kl, vl;
};

/* A reader of a finished sorter: merge__xs_next hands out its records. */
struct xcursor {
    struct xsort *s;
    char *hold;
    size_t cap;
};

/* Add key k[0..kl) with value v[0..vl); spills a sorted run to tmpdir when
 * the buffer passes its budget. DC_OK, DC_ETOOBIG, or DC_EOUTPUT when the
 * run cannot be written (s->why says which file and why). */
int merge__xs_add(struct xsort *s, const void *k, size_t kl, const void *v,
                  size_t vl);
/* Done adding: sort what is in memory, or spill it and open every run.
 * DC_OK, DC_EOUTPUT (spilling) or DC_EIO (opening a run); s->why. */
int merge__xs_finish(struct xsort *s);
/* The next record in order into *x, valid until the next call (the run's
 * buffer is copied to c->hold first, so x survives the refill). 1, or 0 at
 * the end. */
int merge__xs_next(struct xcursor *c, struct xrec *x);
void merge__xs_free(struct xsort *s);
/* v as a big-endian number of `bytes` bytes at p (sort keys). */
void merge__put_be(unsigned char *p, uint64_t v, int bytes);

/* ------------------------------------------------- the state (merge.c) */

enum {
    F_REC = 1,      /* has a record range */
    F_TORN = 2,     /* range past the end of its file */
    F_REVISIT = 4,  /* the line is a content duplicate already */
    F_TRUNC = 8,    /* truncated body */
    F_MKREV = 16,   /* decision: write as a revisit of refers_* */
    F_INFL = 32,    /* located by inflating */
    F_SKIP = 64     /* never requested: a "skipped" line (robots.txt) */
};

/* What the passes carry per line (the sort values). */
struct ent {
    uint32_t jsonl, warc;
    uint32_t line_len, flags;
    int32_t depth, status;
    uint64_t line_off, order, score;
    int64_t src_off, src_len, resp_len; /* -1: unknown */
    int64_t ms, refers_ms;
    char digest[48];
};

struct file {
    char *path;
    int foreign;        /* a synthetic .jsonl: warc_file is under outdir */
    int64_t size;       /* -1 until stat'ed; -2 missing */
};

/* Files kept open for preads: a page's .jsonl and .warc.gz alternate, and
 * a few nodes' files of one depth interleave in pass 4's order. */
#define MERGE_OPEN_FILES 8
#define MERGE_WIN ((size_t)64 << 10)

struct merge_win {   /* bytes of one file read ahead (merge__win_at) */
    char *p;         /* MERGE_WIN bytes, or NULL */
    uint32_t idx;
    uint64_t off;
    size_t len;
};

struct merger {
    const char *dir, *outdir;
    const struct merge_opts *o;
    FILE *warn;
    struct merge_stats *st;
    struct file *files;
    size_t nfiles, capfiles;
    struct xsort u, l, d, out, cdx;
    uint64_t order;
    char *err;
    size_t errlen;
    int fatal;
    struct merge_fd {   /* open files for preads, least recently used out */
        int fd;         /* -1: free */
        uint32_t idx;
        uint64_t used;
    } fds[MERGE_OPEN_FILES];
    uint64_t fd_clock;
    uint32_t last_file;  /* file_add's last answer */
    struct merge_win magic; /* WARC bytes read ahead (lines.c, magic_at) */
    struct merge_win win;   /* lines read ahead (merge__read_line) */
    char *key;              /* a sort key being built (lines.c) */
    size_t capkey;
    char **temps;       /* synthetic files under outdir, removed at the end */
    size_t ntemps;
};

void merge__warn(struct merger *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Record the first fatal error (rc and its message); returns rc. */
int merge__fail(struct merger *m, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An output file that could not be written (errno): DC_EOUTPUT, the
 * message "path: reason". */
int merge__write_fail(struct merger *m, const char *path);
/* The same for a sorter's failure rc: its message names the run file. */
int merge__sort_fail(struct merger *m, int rc);
/* The index of path in the file table, added when new. */
uint32_t merge__file_add(struct merger *m, const char *path, int foreign);
/* File i's size, -2 when it is missing (stat'ed once). */
int64_t merge__file_size(struct merger *m, uint32_t i);
/* An fd for file i (one kept open at a time), or -1. */
int merge__file_fd(struct merger *m, uint32_t i);
/* e's line (e->line_len bytes at e->line_off of file e->jsonl) into buf.
 * DC_OK or DC_EIO. */
int merge__read_line(struct merger *m, const struct ent *e, char *buf);
/* n bytes (at most MERGE_WIN / 2) at off of file idx, through w's
 * read-ahead; NULL when the file cannot be read or ends before them. */
const void *merge__win_at(struct merger *m, struct merge_win *w,
                          uint32_t idx, uint64_t off, size_t n);
/* Read exactly n bytes at off. DC_OK or DC_EIO. */
int merge__pread_all(int fd, void *buf, size_t n, int64_t off);

/* ------------------------------------------------------------ the passes */

/* A line's non-empty string value, or NULL (lines.c). */
const char *merge__opt_s(const struct warc_jobj *o, const char *key);
/* Pass 1 (lines.c): every DIR/depth-N/ *.jsonl into the sorters U and L. */
int merge__read_lines(struct merger *m);
/* Pass 1 for one .jsonl file at depth dir_depth (-1: take the line's). */
int merge__read_jsonl(struct merger *m, const char *path, int dir_depth,
                      int foreign);

/* Foreign files (foreign.c): o->adds[k] as a synthetic .jsonl + WARC. */
int merge__add_file(struct merger *m, size_t k);
/* The value of header `name` in a header block, malloc'd, or NULL. */
char *merge__head_get(const unsigned char *h, size_t n, const char *name);
/* Length of the HTTP head in b[0..n) (through CRLF CRLF), or 0. */
size_t merge__http_head_len(const unsigned char *b, size_t n);

/* Pass 2 (policy.c): latest line per URL, scores; into D or O. */
int merge__pass_urls(struct merger *m);
/* Pass 3 (policy.c): one full response per payload digest; into O. */
int merge__pass_content(struct merger *m);

/* Pass 4 (output.c): the merged WARC files and pages.jsonl. */
struct outw {
    int depth;
    FILE *f;
    int64_t pos;
    char name[64], tmp[PATH_MAX], final[PATH_MAX];
};

struct pass4 {
    struct outw cur;
    FILE *pages;
    char ptmp[PATH_MAX];
    unsigned char *buf;
    char *wbuf, *pbuf;  /* stdio buffers of cur.f and pages (OUT_BUF) */
    int no_kcopy;       /* copy_file_range does not work here */
    uint32_t pend_w;    /* queued copy: file, offset, length (copy_bytes) */
    int64_t pend_off, pend_len;
    char **done;        /* finished outputs: "tmp\0final" pairs */
    size_t ndone;
};

int merge__pass_output(struct merger *m, struct pass4 *p4);
/* Rename every output into place when ok, else remove it (output.c). */
int merge__publish(struct merger *m, struct pass4 *p4, int ok);

/* Pass 5 (index.c): a page's CDXJ line into C (called by pass 4), then
 * index.cdxj and summary.json. */
int merge__cdx_add(struct merger *m, const struct warc_jobj *o,
                   const struct ent *e, int64_t out_off, const char *fname);
int merge__write_index(struct merger *m);
int merge__write_summary(struct merger *m);

#endif
