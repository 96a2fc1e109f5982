/*
 * u-warc-full.c: the WARC writer when the disk fills. The kernel refuses
 * the writes for real: RLIMIT_FSIZE caps every file this process writes
 * (a write past the cap is cut short, the next one fails with EFBIG,
 * SIGXFSZ ignored), which is what a full disk does to the writer, one file
 * at a time, and needs no privileges.
 *
 * Each row caps the files, appends pages until the writer refuses one, and
 * checks: the error names the file and the system's reason; it is sticky;
 * the WARC file reads to a clean end with exactly the records of the pages
 * appended (nothing torn, no orphan record of the refused page); the JSON
 * lines file holds one whole line per page, each pointing at its records;
 * a pair whose warcinfo record did not fit is gone (one whose first line
 * did not fit keeps its warcinfo alone). Then the cap is lifted
 * and a new writer on the same directory (a restarted node) writes the
 * remaining pages into the next file pair.
 *
 * Rows: the warcinfo record does not fit; a page's records do not fit
 * (WARC file fills first); the JSON line does not fit (pages with many
 * outlinks: the line outgrows the compressed records); and caps drawn
 * from a fixed seed. Every row runs twice: unbuffered (each append
 * writes), and buffered as the node writes (warc_writer_flush after
 * every FLUSH_EVERY pages: the refusal comes at a flush, and the files
 * end with the pages of the last flush that succeeded, none of the batch
 * that failed).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "conf.h"
#include "warc.h"
#include "t.h"
#include "t-warc.h"

#define NPAGES 40
#define BODY 3000
#define MAXLINKS 1500
#define FLUSH_EVERY 3

struct row {
    const char *what;
    long cap;        /* RLIMIT_FSIZE, bytes */
    int links;       /* outlinks per page */
    const char *file; /* the suffix of the file the error names, or NULL */
    int min_pages;   /* pages appended before the refusal, at least */
};

static const struct row rows[] = {
    { "warcinfo does not fit", 200, 0, ".warc.gz", 0 },
    { "a page's records do not fit", 20000, 0, ".warc.gz", 1 },
    { "the JSON line does not fit", 300000, MAXLINKS, ".jsonl", 1 },
};

static char links_buf[MAXLINKS][48];
static const char *links[MAXLINKS];

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static char last_errmsg[1024];

static struct warc_writer_opts wopts = { "dcrawl/test", "test", 0, 6, 0 };

/* Page i with nl outlinks, its records built into *b. */
static void page_make(int i, int nl, struct warc_page *p, char *url,
                      char *body, struct warc_built *b)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: "
                               "text/html\r\n\r\n";
    memset(p, 0, sizeof(*p));
    snprintf(url, 64, "http://full.test/page-%d", i);
    for (int k = 0; k < BODY; k++) /* random text: compresses little */
        body[k] = (char)('a' + rnd() % 26);
    p->url = url;
    p->status = 200;
    p->fetched_ms = 1700000000000LL + i;
    p->resp_head = head;
    p->resp_head_len = sizeof(head) - 1;
    p->body = body;
    p->body_len = BODY;
    p->request = "GET / HTTP/1.1\r\n\r\n";
    p->request_len = strlen(p->request);
    p->outlinks = links;
    p->noutlinks = (size_t)nl;
    CHECK(warc_record_build(p, 6, b) == DC_OK, "build page %d", i);
}

static void set_cap(rlim_t cap)
{
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = cap == RLIM_INFINITY || cap > rl.rlim_max ? rl.rlim_max : cap;
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit: %s", strerror(errno));
}

/* Append pages [from, NPAGES) until one is refused; the count of pages
 * written. Buffered: a flush after every FLUSH_EVERY pages and at the end;
 * the pages count once their flush succeeded. */
static int append_until(struct warc_writer *w, int from, int nl, int *rc)
{
    struct warc_page p;
    struct warc_built b;
    char url[64], body[BODY];
    int n = 0, held = 0;

    *rc = DC_OK;
    for (int i = from; i < NPAGES && !*rc; i++) {
        page_make(i, nl, &p, url, body, &b);
        *rc = warc_writer_append(w, &p, &b, "n1");
        held += *rc == DC_OK;
        warc_built_release(&b);
        if (!*rc && wopts.buffered && (held == FLUSH_EVERY || i == NPAGES - 1))
            *rc = warc_writer_flush(w);
        if (!*rc && (!wopts.buffered || held == FLUSH_EVERY || i == NPAGES - 1)) {
            n += held;
            held = 0;
        }
    }
    return n;
}

/* The pair seq of dir holds exactly `pages` whole pages, every line's
 * range inside the WARC file and the ranges back to back. */
static void check_pair(const char *dir, int seq, int pages, const char *what)
{
    char wp[512], jp[512], *lines, *save = NULL, *line;
    size_t wlen = 0, jlen = 0;
    int end = 0, n, k = 0;
    double next = -1;

    snprintf(wp, sizeof(wp), "%s/depth-2/n1-%05d.warc.gz", dir, seq);
    snprintf(jp, sizeof(jp), "%s/depth-2/n1-%05d.jsonl", dir, seq);
    n = read_count(wp, &end, NULL);
    CHECK(end == DC_ENOTFOUND && n == 1 + 3 * pages,
          "%s: %s: %d records (want %d), end %s", what, wp, n, 1 + 3 * pages,
          dc_strerror(end));
    free(t_slurp(wp, &wlen));
    lines = t_slurp(jp, &jlen);
    CHECK(lines && (jlen == 0 || lines[jlen - 1] == '\n'),
          "%s: %s ends with a whole line", what, jp);
    for (line = lines ? strtok_r(lines, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save), k++) {
        struct warc_jobj o = { 0 };
        const struct warc_jkv *off, *len;
        int ok = warc_json_parse(line, strlen(line), &o) == DC_OK;
        off = warc_jobj_get(&o, "warc_offset");
        len = warc_jobj_get(&o, "warc_length");
        ok = ok && off && len && off->type == WARC_JNUM &&
             len->type == WARC_JNUM && off->num + len->num <= (double)wlen &&
             (next < 0 || off->num == next);
        CHECK(ok, "%s: line %d parses, its range inside %zu bytes", what, k,
              wlen);
        if (off && len)
            next = off->num + len->num;
        warc_jobj_release(&o);
    }
    CHECK(k == pages && (pages == 0 || next == (double)wlen),
          "%s: %d lines for %d pages, the last range ends at the file's end "
          "(%.0f of %zu)", what, k, pages, next, wlen);
    free(lines);
}

static void run_row(const struct row *r, const char *tmp, int idx)
{
    char dir[400], what[160], wp[512];
    struct warc_writer *w = NULL;
    int rc, n, n2, first;

    snprintf(dir, sizeof(dir), "%s/row-%d", tmp, idx);
    snprintf(what, sizeof(what), "%s (cap %ld, %d links%s)", r->what, r->cap,
             r->links, wopts.buffered ? ", buffered" : "");
    CHECK(warc_writer_open(&w, dir, 2, "n1", &wopts) == DC_OK, "%s: open",
          what);
    set_cap((rlim_t)r->cap);
    n = append_until(w, 0, r->links, &rc);
    set_cap(RLIM_INFINITY);
    CHECK(rc == DC_EIO && n >= r->min_pages, "%s: refused after %d pages (%s)",
          what, n, dc_strerror(rc));
    CHECK(strstr(warc_writer_errmsg(w), dir) &&
              strstr(warc_writer_errmsg(w), strerror(EFBIG)) &&
              (!r->file || strstr(warc_writer_errmsg(w), r->file)),
          "%s: message names the file and the reason: %s", what,
          warc_writer_errmsg(w));
    snprintf(last_errmsg, sizeof(last_errmsg), "%s",
             warc_writer_errmsg(w));
    CHECK(append_until(w, 0, 0, &rc) == 0 && rc == DC_EIO, "%s: sticky", what);
    CHECK(warc_writer_close(&w) == DC_EIO, "%s: close reports it", what);
    /* a pair whose warcinfo did not fit is gone; one whose first line
     * did not fit holds its warcinfo alone */
    snprintf(wp, sizeof(wp), "%s/depth-2/n1-00000.warc.gz", dir);
    first = access(wp, F_OK) == 0;
    CHECK(first || (n == 0 && strstr(last_errmsg, ".warc.gz")),
          "%s: pair 0 kept (%d pages) or removed with its warcinfo", what, n);
    if (first)
        check_pair(dir, 0, n, what);
    /* restarted with space: the rest goes to the next pair */
    CHECK(warc_writer_open(&w, dir, 2, "n1", &wopts) == DC_OK, "%s: reopen",
          what);
    n2 = append_until(w, n, r->links, &rc);
    CHECK(rc == DC_OK && n + n2 == NPAGES, "%s: the rest written (%d + %d)",
          what, n, n2);
    CHECK(warc_writer_close(&w) == DC_OK, "%s: close", what);
    check_pair(dir, first, n2, what);
}

int main(void)
{
    char tmpl[] = "/tmp/u-warc-full-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    int idx = 0;

    if (!tmp) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return t_done("u-warc-full");
    }
    signal(SIGXFSZ, SIG_IGN);
    for (int i = 0; i < MAXLINKS; i++) {
        snprintf(links_buf[i], sizeof(links_buf[i]),
                 "http://full.test/link/%d/%llu", i,
                 (unsigned long long)(rnd() % 1000000));
        links[i] = links_buf[i];
    }
    for (wopts.buffered = 0; wopts.buffered < 2; wopts.buffered++) {
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
            run_row(&rows[i], tmp, idx++);
        for (int i = 0; i < 8; i++) { /* caps from a fixed seed */
            struct row r = { "seeded cap", 0, 0, NULL, 0 };
            r.cap = 2000 + (long)(rnd() % 90000);
            r.links = (int)(rnd() % 3) * 700;
            run_row(&r, tmp, idx++);
        }
    }
    rm_rf(tmp);
    return t_done("u-warc-full");
}
