/*
 * parse_bench: the HTML link extraction cost per page.
 *
 *   parse_bench DIR [REPEAT] [BLOCKS]
 *
 * BLOCKS: the tags that cut pages into blocks (parser_set_blocks), as
 * noise.blocks ("default": that setting's default), so text is counted
 * as in a crawl with the noise filter on; without it blocks are off and
 * text is folded to one character, as in a crawl with noise off.
 *
 * Reads every *.html file under DIR into memory first, then calls
 * parser_parse_html() on each (one thread, one struct parser, PARSER_URL_
 * STRIP_INDEX), REPEAT times. Only the parse loop is timed, in process CPU
 * time, as shared/bench/ceiling/gumbo_count.c does, so the two numbers
 * compare directly (gumbo_count is gumbo's parse plus a bare tree walk).
 * Prints one JSON object: files, bytes, repeat, links (unique per page,
 * summed), found, rejected, blocks and blocks_hash (with BLOCKS: how many
 * blocks, and a hash of their sums, parents and flags and of each link's
 * block, from the first pass), read_s, parse_wall_s, parse_cpu_s,
 * mb_per_s, pages_per_s, us_per_page.
 *
 * Page URLs: a file DIR/hosts/HOST/PATH (gen_site.py's layout) is
 * http://HOST:8080/PATH; any other file is http://localhost/RELPATH.
 */
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "conf.h"
#include "parser.h"

struct doc {
    char *url;
    char *data;
    size_t len;
};

static struct doc *docs;
static size_t ndocs, capdocs, total_bytes, root_len;

/* FNV-1a of v's n bytes into *h. */
static void fnv(uint64_t *h, const void *v, size_t n)
{
    const unsigned char *b = v;

    while (n-- > 0)
        *h = (*h ^ *b++) * 0x100000001b3ULL;
}

/* The page's blocks (counts, flags, parents, text sums) and the block of
 * each link into *h, so two builds can be told to cut pages the same;
 * returns the number of blocks. */
static size_t block_sum(const struct parser_result *res, uint64_t *h)
{
    size_t k;

    for (k = 0; k < res->nblocks; k++) {
        const struct parser_block *b = &res->blocks[k];
        uint64_t f[5] = {b->text, b->link_text, b->parent, b->nlinks,
                         b->flags};
        fnv(h, f, sizeof f);
    }
    for (k = 0; k < res->nlinks; k++)
        fnv(h, &res->links[k].block, sizeof res->links[k].block);
    return res->nblocks;
}

static char *page_url(const char *rel)
{
    char buf[PARSER_URL_MAX];
    const char *slash;

    if (strncmp(rel, "hosts/", 6) == 0 && (slash = strchr(rel + 6, '/')))
        snprintf(buf, sizeof buf, "http://%.*s:8080%s", (int)(slash - rel - 6),
                 rel + 6, slash);
    else
        snprintf(buf, sizeof buf, "http://localhost/%s", rel);
    return xstrdup(buf);
}

static int visit(const char *path, const struct stat *sb, int type,
                 struct FTW *ftw)
{
    size_t n = strlen(path), got;
    struct doc *d;
    FILE *f;

    (void)ftw;
    if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".html") != 0)
        return 0;
    f = fopen(path, "rb");
    if (!f)
        return 0;
    if (ndocs == capdocs)
        xgrow((void **)&docs, &capdocs, ndocs + 1, sizeof *docs);
    d = &docs[ndocs];
    d->data = xmalloc((size_t)sb->st_size + 1);
    got = fread(d->data, 1, (size_t)sb->st_size, f);
    fclose(f);
    d->len = got;
    d->url = page_url(path + root_len + (path[root_len] == '/'));
    ndocs++;
    total_bytes += got;
    return 0;
}

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    size_t links = 0, found = 0, rejected = 0, blocks = 0, i;
    uint64_t bsum = 0xcbf29ce484222325ULL;
    double r0, r1, w0, w1, c0, c1, pages, mb, cpu;
    const struct parser_result *res;
    struct parser *p;
    int repeat, r;

    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [REPEAT]\n", argv[0]);
        return 2;
    }
    repeat = argc > 2 ? atoi(argv[2]) : 1;
    if (repeat < 1)
        repeat = 1;
    root_len = strlen(argv[1]);
    r0 = now(CLOCK_MONOTONIC);
    if (nftw(argv[1], visit, 64, FTW_PHYS) != 0) {
        perror("nftw");
        return 1;
    }
    r1 = now(CLOCK_MONOTONIC);
    if (ndocs == 0) {
        fprintf(stderr, "%s: no *.html files under %s\n", argv[0], argv[1]);
        return 1;
    }
    p = parser_new(PARSER_URL_STRIP_INDEX, 2048);
    if (argc > 3) {
        struct conf c;
        conf_init(&c);
        if (parser_set_blocks(p, strcmp(argv[3], "default") == 0
                                     ? c.noise_blocks : argv[3]) != 0) {
            fprintf(stderr, "%s: bad block tags: %s\n", argv[0], argv[3]);
            return 1;
        }
        conf_release(&c);
    }
    w0 = now(CLOCK_MONOTONIC);
    c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (r = 0; r < repeat; r++) {
        for (i = 0; i < ndocs; i++) {
            if (parser_parse_html(p, docs[i].url, docs[i].data, docs[i].len,
                                  &res) != DC_OK)
                continue;
            links += res->nlinks;
            found += res->found;
            rejected += res->rejected;
            if (r == 0)
                blocks += block_sum(res, &bsum);
        }
    }
    w1 = now(CLOCK_MONOTONIC);
    c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    cpu = c1 - c0;
    pages = (double)ndocs * repeat;
    mb = (double)total_bytes * repeat / 1e6;
    printf("{\"files\": %zu, \"bytes\": %zu, \"repeat\": %d, \"links\": %zu, "
           "\"found\": %zu, \"rejected\": %zu, \"blocks\": %zu, "
           "\"blocks_hash\": \"%016" PRIx64 "\", \"read_s\": %.3f, "
           "\"parse_wall_s\": %.3f, \"parse_cpu_s\": %.3f, \"mb_per_s\": %.1f, "
           "\"pages_per_s\": %.1f, \"us_per_page\": %.1f}\n",
           ndocs, total_bytes, repeat, links / (size_t)repeat,
           found / (size_t)repeat, rejected / (size_t)repeat, blocks, bsum,
           r1 - r0, w1 - w0,
           cpu, mb / cpu, pages / cpu, 1e6 * cpu / pages);
    parser_free(&p);
    for (i = 0; i < ndocs; i++) {
        free(docs[i].url);
        free(docs[i].data);
    }
    free(docs);
    return 0;
}
