/*
 * netclass.c: which addresses are not on the public internet, for
 * scope.private_addresses.
 *
 * One table of named blocks (IANA's special-purpose registries, RFC 6890
 * and its updates, plus the cloud metadata addresses). An address is
 * public when no row holds it; otherwise its class is the index of the
 * first row that does (more specific rows come first: the metadata
 * address 169.254.169.254/32 before link-local 169.254.0.0/16). IPv6
 * addresses that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
 * NAT64 64:ff9b::/96, 6to4 2002::/16) are classed by that IPv4 address
 * when it is not public, so ::ffff:10.0.0.1 is in 10.0.0.0/8.
 *
 * A "range" in the seeds mode is one row: a seed on 127.0.4.1 allows
 * 127.0.0.0/8 and nothing else. A set of rows is a 64-bit mask (the table
 * has fewer than 64 rows), written to Redis as the rows' CIDR texts
 * separated by commas, so a table that grows keeps old masks readable.
 *
 * Everything here is pure and reentrant (the fetch callback uses it).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "crawler.h"

struct block {
    const char *cidr; /* as written to Redis and in messages */
    const char *what;
    int v6;           /* 0: IPv4 */
    unsigned char net[16];
    int bits;
};

/* clang-format off */
static const struct block blocks[] = {
    {"169.254.169.254/32", "cloud metadata", 0, {169, 254, 169, 254}, 32},
    {"0.0.0.0/8", "this network", 0, {0}, 8},
    {"10.0.0.0/8", "private", 0, {10}, 8},
    {"100.64.0.0/10", "shared (CGNAT)", 0, {100, 64}, 10},
    {"127.0.0.0/8", "loopback", 0, {127}, 8},
    {"169.254.0.0/16", "link-local", 0, {169, 254}, 16},
    {"172.16.0.0/12", "private", 0, {172, 16}, 12},
    {"192.0.0.0/24", "IETF protocol assignments", 0, {192, 0, 0}, 24},
    {"192.0.2.0/24", "documentation", 0, {192, 0, 2}, 24},
    {"192.88.99.0/24", "6to4 relay", 0, {192, 88, 99}, 24},
    {"192.168.0.0/16", "private", 0, {192, 168}, 16},
    {"198.18.0.0/15", "benchmarking", 0, {198, 18}, 15},
    {"198.51.100.0/24", "documentation", 0, {198, 51, 100}, 24},
    {"203.0.113.0/24", "documentation", 0, {203, 0, 113}, 24},
    {"224.0.0.0/4", "multicast", 0, {224}, 4},
    {"255.255.255.255/32", "broadcast", 0, {255, 255, 255, 255}, 32},
    {"240.0.0.0/4", "reserved", 0, {240}, 4},
    {"::/128", "unspecified", 1, {0}, 128},
    {"::1/128", "loopback", 1, {[15] = 1}, 128},
    {"::/96", "IPv4-compatible (deprecated)", 1, {0}, 96},
    {"64:ff9b:1::/48", "local NAT64", 1, {0, 0x64, 0xff, 0x9b, 0, 1}, 48},
    {"100::/64", "discard-only", 1, {1, 0}, 64},
    {"2001:db8::/32", "documentation", 1, {0x20, 1, 0x0d, 0xb8}, 32},
    {"fd00:ec2::254/128", "cloud metadata", 1,
     {0xfd, 0, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02}, 128},
    {"fc00::/7", "unique local (private)", 1, {0xfc}, 7},
    {"fe80::/10", "link-local", 1, {0xfe, 0x80}, 10},
    {"fec0::/10", "site-local (deprecated)", 1, {0xfe, 0xc0}, 10},
    {"ff00::/8", "multicast", 1, {0xff}, 8},
};
/* clang-format on */
#define NBLOCKS (int)(sizeof(blocks) / sizeof(blocks[0]))
_Static_assert(sizeof(blocks) / sizeof(blocks[0]) <= 64,
               "a set of blocks is a 64-bit mask");

static int prefix_match(const unsigned char *a, const unsigned char *net,
                        int bits)
{
    int full = bits / 8, rest = bits % 8;
    if (memcmp(a, net, (size_t)full))
        return 0;
    if (!rest)
        return 1;
    return ((a[full] ^ net[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

static int class_of(const unsigned char *a, int v6)
{
    for (int i = 0; i < NBLOCKS; i++)
        if (blocks[i].v6 == v6 && prefix_match(a, blocks[i].net, blocks[i].bits))
            return i;
    return NETCLASS_PUBLIC;
}

/* The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4). */
static const unsigned char *embedded_v4(const unsigned char *a)
{
    static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12))
        return a + 12;
    if (a[0] == 0x20 && a[1] == 0x02)
        return a + 2;
    return NULL;
}

int netclass_of(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return class_of((const unsigned char *)&in->sin_addr, 0);
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        const unsigned char *a = in6->sin6_addr.s6_addr, *v4 = embedded_v4(a);
        int c = v4 ? class_of(v4, 0) : NETCLASS_PUBLIC;
        return c != NETCLASS_PUBLIC ? c : class_of(a, 1);
    }
    return NETCLASS_OTHER;
}

int netclass_of_text(const char *ip)
{
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
    memset(&in, 0, sizeof(in));
    memset(&in6, 0, sizeof(in6));
    if (inet_pton(AF_INET, ip, &in.sin_addr) == 1) {
        in.sin_family = AF_INET;
        return netclass_of((struct sockaddr *)&in);
    }
    if (inet_pton(AF_INET6, ip, &in6.sin6_addr) == 1) {
        in6.sin6_family = AF_INET6;
        return netclass_of((struct sockaddr *)&in6);
    }
    return NETCLASS_OTHER;
}

const char *netclass_cidr(int c)
{
    return c >= 0 && c < NBLOCKS ? blocks[c].cidr : c == NETCLASS_PUBLIC ? "public" : "unknown";
}

const char *netclass_what(int c)
{
    return c >= 0 && c < NBLOCKS ? blocks[c].what : c == NETCLASS_PUBLIC ? "public" : "not IP";
}

int netclass_mode_parse(const char *s)
{
    if (!s || !strcmp(s, "seeds"))
        return NETCLASS_SEEDS;
    return !strcmp(s, "allow") ? NETCLASS_ALLOW : NETCLASS_DENY;
}

int netclass_allowed(int mode, uint64_t mask, int c)
{
    if (c == NETCLASS_PUBLIC || mode == NETCLASS_ALLOW)
        return 1;
    if (c < 0 || mode == NETCLASS_DENY) /* not IP: nothing to connect to */
        return 0;
    return (mask >> c) & 1;
}

uint64_t netclass_mask_parse(const char *list)
{
    uint64_t m = 0;
    const char *p = list ? list : "";
    while (*p) {
        size_t n = strcspn(p, ",");
        for (int i = 0; i < NBLOCKS; i++)
            if (strlen(blocks[i].cidr) == n && !memcmp(p, blocks[i].cidr, n))
                m |= (uint64_t)1 << i;
        p += n;
        if (*p)
            p++;
    }
    return m;
}

void netclass_mask_format(uint64_t mask, char *out, size_t cap)
{
    size_t k = 0;
    if (!cap)
        return;
    out[0] = '\0';
    for (int i = 0; i < NBLOCKS; i++) {
        int w;
        if (!((mask >> i) & 1))
            continue;
        w = snprintf(out + k, cap - k, "%s%s", k ? "," : "", blocks[i].cidr);
        if (w < 0 || (size_t)w >= cap - k) {
            out[k] = '\0'; /* cut at a whole entry */
            return;
        }
        k += (size_t)w;
    }
}
