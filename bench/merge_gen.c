/*
 * merge_gen.c: a synthetic crawl output for bench/merge.sh, written through
 * the real writer (warc_record_build + warc_writer_append), so the files
 * are exactly what nodes write.
 *
 *   merge_gen DIR NODE MB [SEED]
 *
 * writes about MB megabytes of WARC (compressed) under DIR/depth-{0,1,2}/
 * as node NODE. Bodies are random text from a small vocabulary (deflates to
 * about 1/3, like HTML), 8-64 KB. Every 40th page repeats an earlier body
 * under a new URL (a content duplicate), every 50th page re-fetches a URL
 * of another node's range (a URL duplicate across nodes), and every page
 * has 20 outlinks into the URL space so merge computes scores.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "warc.h"

static uint64_t rs = 88172645463325252ull;

static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static const char *const words[] = {
    "the", "crawler", "archive", "page", "link", "<p>", "</p>", "<div>",
    "</div>", "network", "record", "payload", "header", "depth", "node",
    "merge", "index", "<a href=\"/x\">", "</a>", "content", "digest", "of",
    "and", "to", "in", "a", "is", "that", "for", "it", "with", "as", "on"
};

static size_t make_body(char *b, size_t want)
{
    size_t n = 0;

    while (n + 32 < want) {
        const char *w = words[rnd() % (sizeof(words) / sizeof(words[0]))];
        size_t l = strlen(w);
        memcpy(b + n, w, l);
        n += l;
        b[n++] = rnd() % 11 ? ' ' : '\n';
        if (rnd() % 7 == 0)
            n += (size_t)sprintf(b + n, "%llu ",
                                 (unsigned long long)(rnd() % 1000000));
    }
    b[n] = '\0';
    return n;
}

int main(int argc, char **argv)
{
    struct warc_writer_opts o = { "merge_gen", "synthetic", 1 << 30, 1 };
    struct warc_writer *w[3] = { NULL, NULL, NULL };
    static char body[70000], dup_body[70000], head[256];
    char url[128], links[20][128];
    const char *lp[20];
    const char *req = "GET / HTTP/1.1\r\nHost: gen.test\r\n\r\n";
    size_t dup_len = 0;
    uint64_t written = 0, limit, i;
    int node;

    if (argc < 4) {
        fprintf(stderr, "usage: merge_gen DIR NODE MB [SEED]\n");
        return 2;
    }
    node = atoi(argv[2]);
    limit = (uint64_t)atoll(argv[3]) << 20;
    rs += (uint64_t)(argc > 4 ? atoll(argv[4]) : 0) * 7919 + (uint64_t)node;
    for (int d = 0; d < 3; d++) {
        char id[32];
        snprintf(id, sizeof(id), "gen%d", node);
        if (warc_writer_open(&w[d], argv[1], d, id, &o)) {
            fprintf(stderr, "merge_gen: cannot open writer\n");
            return 1;
        }
    }
    for (i = 0; written < limit; i++) {
        struct warc_page p = { 0 };
        struct warc_built b;
        int d = (int)(i % 3);
        uint64_t u = (uint64_t)node * 100000000ull + i;
        if (i % 50 == 49) /* a URL another node fetched too */
            u = (uint64_t)((node + 1) % 4) * 100000000ull + i / 2;
        snprintf(url, sizeof(url), "http://h%llu.gen.test/p/%llu",
                 (unsigned long long)(u % 997), (unsigned long long)u);
        for (int k = 0; k < 20; k++) {
            snprintf(links[k], sizeof(links[k]), "http://h%llu.gen.test/p/%llu",
                     (unsigned long long)(rnd() % 997),
                     (unsigned long long)(rnd() % 400000));
            lp[k] = links[k];
        }
        p.url = url;
        p.fetched_ms = 1700000000000LL + (int64_t)i * 10;
        p.depth = d;
        p.status = 200;
        p.content_type = "text/html";
        p.request = req;
        p.request_len = strlen(req);
        if (i % 40 == 39 && dup_len) {
            memcpy(body, dup_body, dup_len + 1);
            p.body_len = dup_len;
        } else {
            p.body_len = make_body(body, 8192 + rnd() % 57344);
            if (i % 40 == 5) {
                memcpy(dup_body, body, p.body_len + 1);
                dup_len = p.body_len;
            }
        }
        p.body = body;
        p.decoded_len = p.body_len;
        snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: "
                 "text/html\r\nContent-Length: %zu\r\n\r\n", p.body_len);
        p.resp_head = head;
        p.resp_head_len = strlen(head);
        p.outlinks = lp;
        p.noutlinks = 20;
        p.links_found = 20;
        if (warc_record_build(&p, 1, &b) ||
            warc_writer_append(w[d], &p, &b, NULL)) {
            fprintf(stderr, "merge_gen: write failed\n");
            return 1;
        }
        written += b.len;
        warc_built_release(&b);
    }
    for (int d = 0; d < 3; d++)
        if (warc_writer_close(&w[d]))
            return 1;
    printf("%llu pages, %llu bytes\n", (unsigned long long)i,
           (unsigned long long)written);
    return 0;
}
