/*
 * workers.c: the CPU side of a page, on a pool of threads so the node's
 * main thread only moves bytes and talks to Redis. For each fetched page a
 * worker:
 *   1. builds its WARC records (SHA-1 digests, gzip: warc_record_build);
 *   2. decodes the content-coding (gzip/deflate, capped at fetch.max_bytes
 *      so a compression bomb ends at the cap);
 *   3. if its media type is one of parse.content_types and its links are
 *      to be followed: converts it to UTF-8 (the charset of the
 *      Content-Type header, else of a <meta> in the first 1024 bytes;
 *      parser_charset_*; capped at fetch.max_bytes), parses it with gumbo
 *      (one struct parser per thread: the first parse.max_bytes as the
 *      page's DOM, the rest in slices of at most SLICE_BYTES cut before
 *      tags, for links only) and copies out the canonical links with their
 *      host keys and fingerprints, and the page directives (meta robots
 *      noindex, rel=canonical, meta refresh; meta nofollow and
 *      rel=nofollow links are left out by the parser); with
 *      noise.enabled the parser also measures the page's blocks and each
 *      link gets its block's noise signals (over the ratio, semantic
 *      navigation, main content: stateless, so they are found here; the
 *      per-host block rule and cluster stage run on the node's main
 *      thread).
 *      Links found only past the DOM have no block: they count as content.
 *   4. frees the body once the records are built (release_body): the
 *      page then waits for the node's results phase holding only its
 *      records and links.
 *
 * A 3xx with a Location is not parsed: its one "link" is the target,
 * canonicalized, flagged j->redirect (the node admits it at the same
 * depth and counts the hop), unless fetch.max_redirects hops led here
 * already: then the page gets the error "too many redirects".
 *
 * Memory of a page is bounded by fetch.max_bytes twice (raw body, decoded
 * body: a compression bomb stops at the cap and the line says truncated),
 * once more for a UTF-8 copy of a page in another charset, plus the
 * parser's: gumbo's tree of at most parse.max_bytes (about 30 bytes per
 * byte of dense markup) and the page's links. A noindex
 * page is still archived (WARC) and listed, flagged "noindex".
 *
 * Jobs go in through a mutex-protected FIFO and come back on a done list;
 * a worker that puts a job on an empty done list calls wake() so the main
 * thread's poll returns (the main thread takes the whole list at once, so
 * until it does, one wake-up covers the jobs that follow).
 *
 * With two threads or more, the last one is a spare: it takes jobs only
 * while SPARE_QUEUED or more wait unstarted, or SPARE_BYTES of bodies. A crawl the other threads
 * keep up with (one host, one connection: the pages come one at a time)
 * then leaves a core to the node's main thread and Redis, whose round
 * trips bound it (on 2 cores the spare's share of them cost the
 * single-host crawl of bench/deadhosts.sh about 10 % of its time); a
 * crawl bound by parsing (many hosts, a backlog) still uses every thread.
 * Thread rules: workers touch only their job; conf is read-only.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif


#include "conf.h"
#include "dedup.h"
#include "node-internal.h"
#include "noise.h"
#include "parser.h"

/* Largest slice of a body past its DOM part (parse.max_bytes): gumbo's
 * tree of a slice is about 30 times its size, and a smaller slice only
 * costs more, cheap, gumbo calls (bench/wget-reach.sh measures the
 * crawl's peak RSS on 3 MB and 9 MB pages). */
#define SLICE_BYTES ((size_t)128 << 10)

/* Blocks this large or larger are mmap'd by malloc and given back to the
 * system when freed; a heap keeps up to TRIM_THRESHOLD free at its top
 * (see workers_new). */
#define MMAP_THRESHOLD ((size_t)1 << 20)
#define TRIM_THRESHOLD ((size_t)2 << 20)

/* A worker's stack: what threads had before main.c made the default
 * small (parsing, noise and link extraction of any page run here). */
#define WORKER_STACK ((size_t)8 << 20)

/* Unstarted jobs, or their body bytes, that call the spare thread in. */
#define SPARE_QUEUED 16
#define SPARE_BYTES ((size_t)256 << 10)

struct workers {
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* a job came */
    pthread_cond_t cv_spare; /* SPARE_QUEUED jobs wait */
    struct work_job *in_head, *in_tail, *done;
    size_t queued;           /* jobs in in_head..in_tail */
    size_t queued_bytes;     /* ... their bodies' bytes */
    size_t pending;
    size_t pending_bytes; /* bodies of the jobs submitted, not yet taken */
    int stopping;
    const struct conf *c;
    workers_wake_fn wake;
    void *wake_ud;
    pthread_t *threads;
    int n;
    int started;             /* threads that took their index */
};

void work_job_free(struct work_job *j)
{
    if (!j)
        return;
    fetch_result_free(j->res);
    free(j->lease.entry);
    free(j->lease.url);
    free(j->lease.host);
    warc_built_release(&j->built);
    free(j->dup_of_uri);
    free(j->links.blob);
    free(j->links.link);
    free(j->links.verdict);
    free(j->links.ticket);
    free(j->redirect_to);
    free(j->canonical);
    free(j->refresh);
    free(j);
}

/* Value of header `name` in a raw header block, copied into out. */
static int header_value(const char *head, size_t len, const char *name,
                        char *out, size_t cap)
{
    size_t nl = strlen(name), i = 0;
    while (i < len) {
        const char *line = head + i, *eol = memchr(line, '\n', len - i);
        size_t ll = eol ? (size_t)(eol - line) : len - i;
        if (ll > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0) {
            const char *v = line + nl + 1, *e = line + ll;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' '))
                e--;
            snprintf(out, cap, "%.*s", (int)(e - v), v);
            return 1;
        }
        i += ll + 1;
    }
    return 0;
}

/* Is the media type of ct (before any ';', trimmed) in the
 * space-separated list? */
static int type_listed(const char *list, const char *ct)
{
    size_t n, k;
    if (!ct || !list)
        return 0;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    while (*list) {
        list += strspn(list, " \t,");
        k = strcspn(list, " \t,");
        if (k && k == n && strncasecmp(list, ct, n) == 0)
            return 1;
        list += k;
    }
    return 0;
}

static void links_add(struct work_links *wl, const char *url, size_t len,
                      const char *host, size_t hostlen, unsigned nav,
                      uint32_t blk)
{
    size_t need = wl->blob_len + len + 1;
    struct work_link *l;
    if (need > wl->blob_cap) {
        size_t c = wl->blob_cap ? wl->blob_cap : 4096;
        while (c < need)
            c *= 2;
        wl->blob = xrealloc(wl->blob, c);
        wl->blob_cap = c;
    }
    xgrow((void **)&wl->link, &wl->cap, wl->n + 1, sizeof(*wl->link));
    l = &wl->link[wl->n];
    l->nav = (unsigned char)nav;
    l->blk = blk;
    l->off = (uint32_t)wl->blob_len;
    l->hoff = (uint32_t)(wl->blob_len + (size_t)(host - url));
    l->hlen = (uint32_t)hostlen;
    l->fp = dedup_fingerprint(url, len);
    memcpy(wl->blob + wl->blob_len, url, len + 1);
    wl->blob_len += len + 1;
    wl->n++;
}

static void extract_links(struct work_job *j, struct parser *p,
                          const struct conf *c, const char *body, size_t len)
{
    const struct parser_result *pr;
    const char *page = j->lease.url;
    char canon[PARSER_URL_MAX];
    size_t clen, i;
    unsigned flags = c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    struct fetch_result *r = j->res;

    /* links resolve against the URL that answered (after redirects) */
    if (r->final_url &&
        parser_url_canon(NULL, r->final_url, strlen(r->final_url), flags,
                         PARSER_URL_MAX - 1, canon, sizeof(canon),
                         &clen) == DC_OK)
        page = canon;
    if (parser_parse_html(p, page, body, len, &pr) != DC_OK)
        return;
    j->parsed = 1;
    j->noindex = (pr->meta_robots & PARSER_META_NOINDEX) != 0;
    j->canonical = pr->canonical ? xstrdup(pr->canonical) : NULL;
    j->refresh = pr->refresh ? xstrdup(pr->refresh) : NULL;
    j->links_found = pr->found;
    j->links_rejected = pr->rejected;
    if (pr->blocks)
        j->links.page_text = pr->blocks[0].text - pr->blocks[0].link_text;
    for (i = 0; i < pr->nlinks; i++) {
        const char *host;
        size_t hostlen;
        unsigned nav = 0;
        if (parser_url_host(pr->links[i].url, &host, &hostlen) != DC_OK)
            continue;
        if (pr->blocks && pr->links[i].block != PARSER_BLOCK_NONE) {
            const struct parser_block *b = &pr->blocks[pr->links[i].block];
            nav = noise_block_signals(c->noise_link_ratio, b->text,
                                      b->link_text,
                                      (b->flags & PARSER_BLOCK_NAV) != 0,
                                      (b->flags & PARSER_BLOCK_MAIN) != 0,
                                      b->nlinks, b->nsect, b->nav_links,
                                      b->nav_mirror);
        }
        links_add(&j->links, pr->links[i].url, pr->links[i].len, host,
                  hostlen, nav, pr->links[i].block);
    }
}

void work_job_page(const struct work_job *j, struct warc_page *pg)
{
    const struct fetch_result *r = j->res;
    memset(pg, 0, sizeof(*pg));
    pg->url = j->lease.url;
    pg->final_url = r->final_url ? r->final_url : r->url;
    pg->ip = r->ip[0] ? r->ip : NULL;
    pg->fetched_ms = r->started_ms;
    pg->depth = j->depth;
    pg->status = r->status;
    pg->content_type = r->content_type;
    pg->request = r->req_head;
    pg->request_len = r->req_len;
    pg->resp_head = r->resp_head;
    pg->resp_head_len = r->resp_len;
    pg->body = r->body;
    pg->body_len = r->body_len;
    pg->error = r->error[0] ? r->error : NULL;
    pg->truncated = r->truncated || j->decode_truncated;
    pg->redirect_to = j->redirect_to;
    pg->canonical = j->canonical;
    pg->refresh = j->refresh;
    pg->noindex = j->noindex;
}

/* A 3xx: its Location becomes the job's one link (same depth), or the
 * page fails when fetch.max_redirects hops led here. */
static void redirect(struct work_job *j, const struct conf *c)
{
    struct fetch_result *r = j->res;
    unsigned flags = c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    char canon[PARSER_URL_MAX];
    const char *host;
    size_t n, hostlen;

    if (!r->location)
        return; /* a 3xx without Location is just a page */
    if (j->redirects >= c->fetch_max_redirects) {
        snprintf(r->error, sizeof(r->error), "too many redirects");
        j->redirect_to = xstrdup(r->location);
        return;
    }
    if (parser_url_canon(NULL, r->location, strlen(r->location), flags,
                         (size_t)c->url_max_length, canon, sizeof(canon),
                         &n) != DC_OK ||
        parser_url_host(canon, &host, &hostlen) != DC_OK) {
        j->redirect_to = xstrdup(r->location); /* not followed */
        return;
    }
    j->redirect_to = xstrdup(canon);
    j->redirect = 1;
    links_add(&j->links, canon, n, host, hostlen, 0, 0);
}

/* Decode the content-coding (capped); 0 when the coding is unknown or
 * the data is corrupt. *dec is NULL when nothing was to be decoded. */
static int decode(struct work_job *j, const struct conf *c, char **dec,
                  size_t *len)
{
    struct fetch_result *r = j->res;
    size_t cap = (size_t)c->fetch_max_bytes;
    char enc[64] = "";
    int raw, cut = 0;

    *dec = NULL;
    if (!header_value(r->resp_head, r->resp_len, "Content-Encoding", enc,
                      sizeof(enc)) ||
        strcasecmp(enc, "identity") == 0)
        return 1;
    raw = strcasecmp(enc, "deflate") == 0;
    if (strcasecmp(enc, "gzip") && strcasecmp(enc, "x-gzip") && !raw)
        return 0; /* a coding we did not ask for: not parsed */
    if (parser_inflate(r->body, r->body_len, 0, cap, dec, len, &cut) !=
        DC_OK) {
        free(*dec); /* "deflate" is sometimes sent without zlib header */
        *dec = NULL;
        cut = 0;
        if (!raw || parser_inflate(r->body, r->body_len, 1, cap, dec, len,
                                   &cut) != DC_OK) {
            free(*dec);
            *dec = NULL;
            return 0;
        }
    }
    j->decode_truncated = cut;
    j->decoded_len = *len;
    return 1;
}

/* The page as UTF-8 for the parser: converted when its charset is another
 * one iconv knows (*u8 then owns the copy), else as is. */
static void to_utf8(const struct fetch_result *r, const struct conf *c,
                    const char **body, size_t *len, char **u8)
{
    char cs[64];
    size_t n;
    int cut;

    *u8 = NULL;
    if (!parser_charset_detect(r->content_type, *body, *len, cs, sizeof(cs)) ||
        parser_charset_is_utf8(cs))
        return;
    if (parser_charset_to_utf8(cs, *body, *len, (size_t)c->fetch_max_bytes,
                               u8, &n, &cut) != DC_OK)
        return; /* unknown charset: gumbo reads it as UTF-8 */
    *body = *u8;
    *len = n;
}

/* Once its records are built and its links taken, a page's body is read
 * no more: the node writes the records, and a revisit record is built from
 * the digest (node-write.c). It goes at once, not when the results phase
 * gets to the page: pages wait there behind a batch, or held until their
 * level ends (node-ahead.c). */
static void release_body(struct work_job *j)
{
    if (j->built.len && j->built.digest[0] && j->res) {
        free(j->res->body);
        j->res->body = NULL;
    }
}

static void process(struct work_job *j, struct parser *p, const struct conf *c)
{
    struct fetch_result *r = j->res;
    struct warc_page pg;
    char *dec = NULL, *u8 = NULL;
    const char *body;
    size_t len = r->body_len;

    work_job_page(j, &pg);
    warc_record_build(&pg, c->output_gzip_level, &j->built);
    j->decoded_len = len;
    if (r->status >= 300 && r->status < 400) {
        redirect(j, c);
        return;
    }
    if (r->status < 200 || r->status >= 300 || !r->body)
        return;
    if (!decode(j, c, &dec, &len))
        return;
    body = dec ? dec : r->body;
    if (j->follow && type_listed(c->parse_content_types, r->content_type)) {
        to_utf8(r, c, &body, &len, &u8);
        extract_links(j, p, c, body, len);
    }
    free(u8);
    free(dec);
}

/* Enough parsing waits for the spare thread (w->mu held). */
static int spare_due(const struct workers *w)
{
    return w->queued >= SPARE_QUEUED || w->queued_bytes >= SPARE_BYTES;
}

static void *worker_main(void *arg)
{
    struct workers *w = arg;
    unsigned flags = w->c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    struct parser *p = parser_new(flags, (size_t)w->c->url_max_length);
    /* an unknown tag name leaves blocks off; node setup refuses it first */
    char agent[64];
    parser_agent_token(w->c->crawl_user_agent, agent, sizeof(agent));
    parser_set_agent(p, agent);
    parser_set_limits(p, (size_t)w->c->parse_max_bytes,
                      (size_t)w->c->parse_max_bytes < SLICE_BYTES
                          ? (size_t)w->c->parse_max_bytes
                          : SLICE_BYTES);
    if (w->c->noise_enabled)
        parser_set_blocks(p, w->c->noise_blocks);
    int spare;
    /* what the first page would pay for, while it is still on its way:
     * OpenSSL's digest setup and glibc's time zone file (warc_iso_time) */
    dedup_digests_init();
    tzset();
    pthread_mutex_lock(&w->mu);
    spare = w->n > 1 && ++w->started == w->n; /* the last one */
    pthread_mutex_unlock(&w->mu);
    for (;;) {
        struct work_job *j;
        int first;
        pthread_mutex_lock(&w->mu);
        if (spare)
            while (!spare_due(w) && !w->stopping)
                pthread_cond_wait(&w->cv_spare, &w->mu);
        else
            while (!w->in_head && !w->stopping)
                pthread_cond_wait(&w->cv, &w->mu);
        if (!w->in_head) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        j = w->in_head;
        w->in_head = j->next;
        if (!w->in_head)
            w->in_tail = NULL;
        w->queued--;
        w->queued_bytes -= j->held_bytes;
        pthread_mutex_unlock(&w->mu);

        process(j, p, w->c);
        release_body(j);

        pthread_mutex_lock(&w->mu);
        j->next = w->done;
        first = !w->done;
        w->done = j;
        pthread_mutex_unlock(&w->mu);
        if (first) /* else the wake-up of the first is still pending */
            w->wake(w->wake_ud);
    }
    parser_free(&p);
    return NULL;
}

struct workers *workers_new(int n, const struct conf *c, workers_wake_fn wake,
                            void *ud)
{
    struct workers *w = xcalloc(1, sizeof(*w));
    pthread_attr_t attr;
    int i;
#ifdef __GLIBC__
    /* A big page passes through buffers of several MB (bodies, WARC
     * records, parser chunks) on several threads. glibc raises its mmap
     * threshold after such a block is freed, up to 32 MB, so the next ones
     * come from the threads' heaps and stay resident after the page (+8 MB
     * peak RSS on a crawl with a 3 MB and a 9 MB page, bench/wget-reach.sh).
     * A fixed threshold keeps the big ones mmap'd: freed memory goes back
     * at once. Not too low: every block mmap'd is faulted in again page by
     * page, and a page of 100 KB to 1 MB (common on real sites) has
     * several such blocks (a fault costs ~10 us in a virtual machine). At
     * 256 KB a crawl of SQLite's or Linux's documentation took 14,000 and
     * 35,000 faults; at 1 MB, with a heap giving back only what passes 2
     * MB free at its top, 12,000 and 30,000, 3-6 % less CPU and peak RSS
     * 0-4 MB higher (1.4 MB on the 3 MB + 9 MB pages). */
    mallopt(M_MMAP_THRESHOLD, (int)MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, (int)TRIM_THRESHOLD);
#endif
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->cv_spare, NULL);
    w->c = c;
    w->wake = wake;
    w->wake_ud = ud;
    w->n = n < 1 ? 1 : n;
    w->threads = xcalloc((size_t)w->n, sizeof(*w->threads));
    pthread_attr_init(&attr); /* main.c made the default small */
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    for (i = 0; i < w->n; i++)
        pthread_create(&w->threads[i], &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    return w;
}

void workers_submit(struct workers *w, struct work_job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->in_tail)
        w->in_tail->next = j;
    else
        w->in_head = j;
    w->in_tail = j;
    w->queued++;
    w->pending++;
    j->held_bytes = j->res ? j->res->body_cap : 0;
    w->pending_bytes += j->held_bytes;
    w->queued_bytes += j->held_bytes;
    pthread_cond_signal(&w->cv);
    if (spare_due(w))
        pthread_cond_signal(&w->cv_spare);
    pthread_mutex_unlock(&w->mu);
}

struct work_job *workers_take_done(struct workers *w)
{
    struct work_job *list, *rev = NULL;
    pthread_mutex_lock(&w->mu);
    list = w->done;
    w->done = NULL;
    while (list) { /* restore completion order */
        struct work_job *next = list->next;
        list->next = rev;
        rev = list;
        w->pending--;
        w->pending_bytes -= list->held_bytes;
        list = next;
    }
    pthread_mutex_unlock(&w->mu);
    return rev;
}

void workers_put_back(struct workers *w, struct work_job *list)
{
    struct work_job **tail, *rev = NULL;
    if (!list)
        return;
    pthread_mutex_lock(&w->mu);
    while (list) { /* the done list is newest first: oldest last */
        struct work_job *next = list->next;
        list->next = rev;
        rev = list;
        w->pending++;
        w->pending_bytes += rev->held_bytes;
        list = next;
    }
    for (tail = &w->done; *tail; tail = &(*tail)->next)
        ;
    *tail = rev;
    pthread_mutex_unlock(&w->mu);
}

size_t workers_pending(struct workers *w, size_t *bytes)
{
    size_t n;
    pthread_mutex_lock(&w->mu);
    n = w->pending;
    if (bytes)
        *bytes = w->pending_bytes;
    pthread_mutex_unlock(&w->mu);
    return n;
}

void workers_free(struct workers **wp)
{
    struct workers *w;
    struct work_job *j;
    int i;
    if (!wp || !*wp)
        return;
    w = *wp;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_cond_broadcast(&w->cv_spare);
    pthread_mutex_unlock(&w->mu);
    for (i = 0; i < w->n; i++)
        pthread_join(w->threads[i], NULL);
    while ((j = w->in_head)) {
        w->in_head = j->next;
        work_job_free(j);
    }
    while ((j = w->done)) {
        w->done = j->next;
        work_job_free(j);
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_cond_destroy(&w->cv_spare);
    free(w->threads);
    free(w);
    *wp = NULL;
}
