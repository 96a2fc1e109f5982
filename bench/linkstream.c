/*
 * linkstream.c: the benches' link stream (see linkstream.h): which page a
 * link points to, and the URL text of that page.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linkstream.h"

uint64_t linkstream_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}


static uint64_t rnd(struct linkstream *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545f4914f6cdd1dULL;
}

static double unit(uint64_t r)
{
    return (double)(r >> 11) / 9007199254740992.0;
}

/* Zipf (s = 1, continuous approximation) rank in [0, n). */
static uint64_t zipf(uint64_t r, uint64_t n)
{
    uint64_t k = (uint64_t)exp(unit(r) * log((double)n + 1.0)) - 1;
    return k < n ? k : n - 1;
}

void linkstream_init(struct linkstream *s)
{
    s->rng = 0x9e3779b97f4a7c15ULL;
    s->next_id = 0;
    s->drawn = 0;
    s->recency_only = 0;
}

/* Next link: its page id and a spelling variant (0..3). */
uint64_t linkstream_next(struct linkstream *s, int *variant)
{
    uint64_t r = rnd(s), id;
    unsigned pick = (unsigned)(r % 100);

    s->drawn++;
    *variant = (int)((r >> 8) & 7) < 2 ? (int)((r >> 12) % 3) + 1 : 0;
    if (s->next_id < 16 || pick < 30)
        return s->next_id++;
    r = rnd(s);
    if (pick < 65 && !s->recency_only) /* popularity: rank k is id k */
        id = zipf(r, s->next_id);
    else           /* locality: recently discovered pages */
        id = s->next_id - 1 - zipf(r, s->next_id);
    return id;
}

static const char *const words[] = {
    "news", "sport", "tech", "world", "music", "travel", "food", "garden",
    "science", "health", "books", "cars", "games", "money", "style", "film"
};
static const char *const tlds[] = {"com", "org", "net", "de", "co.uk", "io"};

/* URL text of id with a spelling variant: 1 #fragment, 2 upper-case host,
 * 3 explicit default port. */
int linkstream_url(uint64_t id, int variant, char *out)
{
    uint64_t h = linkstream_mix64(id + 1), g = linkstream_mix64(h);
    unsigned host = (unsigned)zipf(g, LINKSTREAM_HOSTS);
    int https = (linkstream_mix64(host) & 3) != 0, n;
    const char *w = words[(h >> 20) & 15], *tld = tlds[host % 6];
    char hostbuf[64];

    snprintf(hostbuf, sizeof(hostbuf), "%s.site%u.%s",
             host % 3 ? "www" : "blog", host, tld);
    if (variant == 2)
        memcpy(hostbuf, host % 3 ? "WWW" : "BLOG", host % 3 ? 3 : 4);
    n = snprintf(out, LINKSTREAM_MAXURL, "%s://%s%s", https ? "https" : "http", hostbuf,
                 variant == 3 ? (https ? ":443" : ":80") : "");
    switch (h % 6) {
    case 0:
        n += snprintf(out + n, LINKSTREAM_MAXURL - n, "/wiki/%s_Article_%" PRIx64,
                      w, id);
        break;
    case 1:
        n += snprintf(out + n, LINKSTREAM_MAXURL - n,
                      "/products/%s/%" PRIu64 "?ref=home&sort=price", w, id);
        break;
    case 2:
        n += snprintf(out + n, LINKSTREAM_MAXURL - n,
                      "/blog/%u/%02u/a-%s-story-about-%" PRIx64 ".html",
                      2010 + (unsigned)(g % 15), 1 + (unsigned)(g >> 8) % 12,
                      w, id);
        break;
    case 3:
        n += snprintf(out + n, LINKSTREAM_MAXURL - n, "/search?q=%s+%" PRIu64 "&page=%u",
                      w, id >> 4, (unsigned)(id & 15) + 1);
        break;
    case 4:
        n += snprintf(out + n, LINKSTREAM_MAXURL - n, "/news/%s/%" PRIu64 "-%s-%s", w,
                      id, words[(g >> 4) & 15], words[(g >> 9) & 15]);
        break;
    default:
        n += snprintf(out + n, LINKSTREAM_MAXURL - n, "/users/%016" PRIx64 "/profile",
                      h ^ id);
        break;
    }
    if (variant == 1)
        n += snprintf(out + n, LINKSTREAM_MAXURL - n, "#section-%u", (unsigned)(g & 7));
    return n;
}
