/*
 * seeds.c: seed upload. Reads one URL per line (a file, or "-" for stdin,
 * plus URLs given as arguments), skips blank lines and '#' comments,
 * canonicalizes each URL and admits the valid ones at depth 0 in batches
 * (insert-if-absent: a seed already seen is counted, not queued again; a
 * seed over scope.host_budget is counted apart: it is not queued and has
 * no line in pages.jsonl, the count is all that is said).
 * A bad line is reported as "NAME:LINE: reason: text" and loading goes on.
 * With scope.private_addresses=seeds, the non-public ranges of a batch's
 * new hosts are recorded in Redis before the batch is queued
 * (seed-ranges.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "dedup.h"
#include "frontier.h"
#include "parser.h"

#define SEED_BATCH 1024

struct batch {
    struct frontier_url u[SEED_BATCH];
    char *url[SEED_BATCH];
    unsigned char isnew[SEED_BATCH];
    size_t n;
    struct seed_ranges *sr; /* NULL unless scope.private_addresses=seeds */
};

static int batch_flush(struct frontier *f, struct batch *b,
                       struct seed_stats *st)
{
    size_t i, refused = 0;
    uint64_t before = frontier_budget_refused(f);
    int rc = DC_OK;
    if (b->sr)
        rc = seed_ranges_flush(b->sr, f); /* before a node can lease them */
    if (b->n && !rc) {
        rc = frontier_admit(f, b->u, b->n, dc_now_ms(), b->isnew);
        refused = (size_t)(frontier_budget_refused(f) - before);
    }
    for (i = 0; i < b->n; i++) {
        if (!rc) {
            if (b->isnew[i])
                st->accepted++;
            else
                st->seen++;
        }
        free(b->url[i]);
    }
    if (!rc && refused <= st->seen) { /* isnew 0 too: counted apart */
        st->seen -= refused;
        st->budget += refused;
    }
    b->n = 0;
    return rc;
}

/* Report a bad line: the text is cut and made printable. */
static void report(FILE *err, const char *name, size_t line, const char *why,
                   const char *s, size_t len)
{
    char shown[81];
    size_t i, k = 0;
    for (i = 0; i < len && k < 76; i++)
        shown[k++] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (i < len)
        k += (size_t)snprintf(shown + k, sizeof(shown) - k, "...");
    shown[k] = '\0';
    fprintf(err, "%s:%zu: %s: %s\n", name, line, why, shown);
}

static int seed_one(struct frontier *f, const struct conf *c, struct batch *b,
                    const char *name, size_t lineno, const char *s, size_t len,
                    FILE *err, struct seed_stats *st)
{
    char canon[PARSER_URL_MAX];
    size_t clen;
    const char *host;
    size_t hostlen;
    unsigned flags = c->url_strip_index_html ? PARSER_URL_STRIP_INDEX : 0;
    int rc;

    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (!len || *s == '#')
        return DC_OK;
    st->lines++;
    rc = parser_url_canon(NULL, s, len, flags, (size_t)c->url_max_length,
                          canon, sizeof(canon), &clen);
    if (rc == DC_OK && parser_url_host(canon, &host, &hostlen) != DC_OK)
        rc = DC_EURL;
    if (rc) {
        report(err, name, lineno,
               rc == DC_ETOOBIG ? "URL longer than url.max_length"
                                : "not a crawlable http(s) URL",
               s, len);
        st->rejected++;
        return DC_OK;
    }
    b->url[b->n] = xstrndup(canon, clen);
    b->u[b->n].url = b->url[b->n];
    b->u[b->n].len = clen;
    b->u[b->n].host = b->url[b->n] + (host - canon);
    b->u[b->n].hostlen = hostlen;
    b->u[b->n].fp = dedup_fingerprint(canon, clen);
    b->u[b->n].depth = 0;
    if (b->sr)
        seed_ranges_add(b->sr, b->u[b->n].host, hostlen);
    if (++b->n == SEED_BATCH)
        return batch_flush(f, b, st);
    return DC_OK;
}

int seeds_load(struct frontier *f, const struct conf *c, const char *path,
               char **args, int nargs, int ranges, FILE *err,
               struct seed_stats *st)
{
    struct batch *b = xcalloc(1, sizeof(*b));
    FILE *in = NULL;
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int rc = DC_OK, i;

    memset(st, 0, sizeof(*st));
    if (ranges)
        b->sr = seed_ranges_new();
    for (i = 0; i < nargs && !rc; i++)
        rc = seed_one(f, c, b, "argument", (size_t)i + 1, args[i],
                      strlen(args[i]), err, st);
    if (path && !rc) {
        in = strcmp(path, "-") ? fopen(path, "r") : stdin;
        if (!in) {
            fprintf(err, "%s: %s\n", path, strerror(errno));
            rc = DC_EIO;
        }
    }
    while (in && !rc && (got = getline(&line, &cap, in)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)got)) {
            report(err, path, lineno, "line contains a NUL byte", line,
                   strlen(line));
            st->lines++;
            st->rejected++;
            continue;
        }
        rc = seed_one(f, c, b, path, lineno, line, (size_t)got, err, st);
    }
    if (!rc)
        rc = batch_flush(f, b, st);
    else
        batch_flush(f, b, st);
    if (in && in != stdin)
        fclose(in);
    if (b->sr) {
        st->ranges = seed_ranges_mask(b->sr);
        st->unresolved = seed_ranges_unresolved(b->sr);
        seed_ranges_free(&b->sr);
    }
    free(line);
    free(b);
    return rc;
}

void seeds_print_ranges(FILE *out, FILE *err, const struct seed_stats *st)
{
    char text[1024];
    if (st->ranges && out) {
        netclass_mask_format(st->ranges, text, sizeof(text));
        fprintf(out, "seeds: non-public ranges allowed "
                     "(scope.private_addresses=seeds): %s\n", text);
    }
    if (st->unresolved)
        fprintf(err, "dcrawl: scope.private_addresses=seeds: %zu seed hosts "
                     "not resolved (more than %d hosts or %d s of lookups); "
                     "private ranges of theirs are not allowed\n",
                st->unresolved, SEED_RANGES_HOSTS_MAX,
                SEED_RANGES_BUDGET_MS / 1000);
}
