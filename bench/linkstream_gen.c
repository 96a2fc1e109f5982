/*
 * linkstream_gen.c: print the benches' link stream (linkstream.h) as a URL
 * list, one per line, for bench/dedup-cmd.sh:
 *
 *   build-rel/bench/linkstream_gen N > list.txt
 *
 * The first N links of the stream that dedup_bench pushes through the
 * dedup path (30 % new pages, so N links hold about 0.3 N distinct
 * canonical URLs), in their spelling variants. Seeded: the same every run.
 * The number of distinct ids goes to stderr.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "linkstream.h"

int main(int argc, char **argv)
{
    struct linkstream s;
    char url[LINKSTREAM_MAXURL + 1];
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;

    if (argc != 2 || !n) {
        fprintf(stderr, "usage: linkstream_gen N\n");
        return 2;
    }
    linkstream_init(&s);
    for (uint64_t i = 0; i < n; i++) {
        int variant, len;
        uint64_t id = linkstream_next(&s, &variant);
        len = linkstream_url(id, variant, url);
        url[len] = '\n';
        if (fwrite(url, 1, (size_t)len + 1, stdout) != (size_t)len + 1)
            return 1;
    }
    fprintf(stderr, "linkstream_gen: %" PRIu64 " links, %" PRIu64
            " distinct pages\n", n, s.next_id);
    return fflush(stdout) ? 1 : 0;
}
