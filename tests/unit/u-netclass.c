/*
 * u-netclass.c: scope.private_addresses' address classes (crawler/
 * netclass.c) as a table of addresses and the range each falls in, then
 * the decisions of the three modes and the ranges' text form.
 */
#include <stdint.h>
#include <string.h>

#include "crawler.h"
#include "t.h"

struct row {
    const char *ip, *range; /* range: its CIDR, or "public" */
};

static const struct row rows[] = {
    /* public */
    {"93.184.216.34", "public"},
    {"8.8.8.8", "public"},
    {"1.1.1.1", "public"},
    {"172.15.255.255", "public"},
    {"172.32.0.0", "public"},
    {"100.63.255.255", "public"},
    {"100.128.0.0", "public"},
    {"169.253.255.255", "public"},
    {"192.0.1.1", "public"},
    {"198.17.255.255", "public"},
    {"198.20.0.0", "public"},
    {"223.255.255.255", "public"},
    {"2606:4700::1111", "public"},
    {"2001:4860:4860::8888", "public"},
    {"::ffff:8.8.8.8", "public"},
    {"64:ff9b::808:808", "public"},
    {"2002:808:808::1", "public"},
    {"fbff:ffff::1", "public"},
    /* IPv4 blocks */
    {"0.0.0.0", "0.0.0.0/8"},
    {"0.1.2.3", "0.0.0.0/8"},
    {"10.0.0.1", "10.0.0.0/8"},
    {"10.255.255.1", "10.0.0.0/8"},
    {"100.64.0.1", "100.64.0.0/10"},
    {"100.127.255.254", "100.64.0.0/10"},
    {"127.0.0.1", "127.0.0.0/8"},
    {"127.0.4.1", "127.0.0.0/8"},
    {"127.255.255.255", "127.0.0.0/8"},
    {"169.254.0.1", "169.254.0.0/16"},
    {"169.254.169.254", "169.254.169.254/32"},
    {"169.254.169.253", "169.254.0.0/16"},
    {"172.16.0.1", "172.16.0.0/12"},
    {"172.31.255.255", "172.16.0.0/12"},
    {"192.0.0.8", "192.0.0.0/24"},
    {"192.0.2.1", "192.0.2.0/24"},
    {"192.88.99.1", "192.88.99.0/24"},
    {"192.168.1.1", "192.168.0.0/16"},
    {"198.18.0.1", "198.18.0.0/15"},
    {"198.19.255.255", "198.18.0.0/15"},
    {"198.51.100.7", "198.51.100.0/24"},
    {"203.0.113.9", "203.0.113.0/24"},
    {"224.0.0.1", "224.0.0.0/4"},
    {"239.255.255.250", "224.0.0.0/4"},
    {"240.0.0.1", "240.0.0.0/4"},
    {"255.255.255.254", "240.0.0.0/4"},
    {"255.255.255.255", "255.255.255.255/32"},
    /* IPv6 blocks */
    {"::", "::/128"},
    {"::1", "::1/128"},
    {"::2", "::/96"},
    {"::a00:1", "::/96"},
    {"fc00::1", "fc00::/7"},
    {"fd12:3456::1", "fc00::/7"},
    {"fd00:ec2::254", "fd00:ec2::254/128"},
    {"fd00:ec2::253", "fc00::/7"},
    {"fe80::1", "fe80::/10"},
    {"febf:ffff::1", "fe80::/10"},
    {"fec0::1", "fec0::/10"},
    {"ff02::1", "ff00::/8"},
    {"2001:db8::1", "2001:db8::/32"},
    {"100::1", "100::/64"},
    {"64:ff9b:1::1", "64:ff9b:1::/48"},
    /* IPv6 carrying an IPv4 address: classed by it */
    {"::ffff:127.0.0.1", "127.0.0.0/8"},
    {"::ffff:10.1.2.3", "10.0.0.0/8"},
    {"::ffff:169.254.169.254", "169.254.169.254/32"},
    {"::ffff:192.168.0.1", "192.168.0.0/16"},
    {"::ffff:0.0.0.0", "0.0.0.0/8"},
    {"64:ff9b::a00:1", "10.0.0.0/8"},
    {"64:ff9b::7f00:1", "127.0.0.0/8"},
    {"2002:a9fe:a9fe::1", "169.254.169.254/32"},
    {"2002:c0a8:101::1", "192.168.0.0/16"},
};

static int class_of(const char *cidr)
{
    uint64_t m = netclass_mask_parse(cidr);
    for (int i = 0; i < 64; i++)
        if (m == (uint64_t)1 << i)
            return i;
    return NETCLASS_PUBLIC;
}

static void test_table(void)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int c = netclass_of_text(rows[i].ip);
        CHECK(!strcmp(netclass_cidr(c), rows[i].range), "%s: got %s, want %s",
              rows[i].ip, netclass_cidr(c), rows[i].range);
    }
    CHECK(netclass_of_text("example.com") == NETCLASS_OTHER, "a name");
    CHECK(netclass_of_text("10.0.0") == NETCLASS_OTHER, "not an address");
    CHECK(netclass_of_text("") == NETCLASS_OTHER, "empty");
}

static void test_modes(void)
{
    int lo = class_of("127.0.0.0/8"), ten = class_of("10.0.0.0/8");
    int ll = class_of("169.254.0.0/16"), md = class_of("169.254.169.254/32");
    uint64_t seeds = netclass_mask_parse("127.0.0.0/8");

    CHECK(lo >= 0 && ten >= 0 && ll >= 0 && md >= 0, "known ranges");
    CHECK(netclass_mode_parse("seeds") == NETCLASS_SEEDS, "seeds");
    CHECK(netclass_mode_parse("deny") == NETCLASS_DENY, "deny");
    CHECK(netclass_mode_parse("allow") == NETCLASS_ALLOW, "allow");
    /* seeds: only the seeds' own ranges */
    CHECK(netclass_allowed(NETCLASS_SEEDS, seeds, lo), "seeds: loopback");
    CHECK(!netclass_allowed(NETCLASS_SEEDS, seeds, ten), "seeds: not 10/8");
    CHECK(!netclass_allowed(NETCLASS_SEEDS, seeds, ll), "seeds: not link-local");
    CHECK(!netclass_allowed(NETCLASS_SEEDS, seeds, md), "seeds: not metadata");
    CHECK(!netclass_allowed(NETCLASS_SEEDS, netclass_mask_parse("169.254.0.0/16"), md),
          "seeds: a link-local seed does not open the metadata address");
    CHECK(!netclass_allowed(NETCLASS_SEEDS, 0, lo), "seeds: none seeded");
    CHECK(netclass_allowed(NETCLASS_SEEDS, 0, NETCLASS_PUBLIC), "seeds: public");
    CHECK(!netclass_allowed(NETCLASS_SEEDS, ~(uint64_t)0, NETCLASS_OTHER),
          "not IP: never");
    /* deny and allow */
    CHECK(!netclass_allowed(NETCLASS_DENY, seeds, lo), "deny: loopback");
    CHECK(netclass_allowed(NETCLASS_DENY, 0, NETCLASS_PUBLIC), "deny: public");
    CHECK(netclass_allowed(NETCLASS_ALLOW, 0, md), "allow: metadata");
    CHECK(netclass_allowed(NETCLASS_ALLOW, 0, NETCLASS_PUBLIC), "allow: public");
}

static void test_text(void)
{
    char buf[1024], small[16];
    uint64_t m = netclass_mask_parse("127.0.0.0/8,::1/128,bogus,,10.0.0.0/8");

    netclass_mask_format(m, buf, sizeof(buf));
    CHECK(!strcmp(buf, "10.0.0.0/8,127.0.0.0/8,::1/128"), "format: %s", buf);
    CHECK(netclass_mask_parse(buf) == m, "round trip");
    CHECK(netclass_mask_parse("") == 0 && netclass_mask_parse(NULL) == 0, "empty");
    CHECK(netclass_mask_parse("127.0.0.0/9") == 0, "an unknown range");
    netclass_mask_format(m, small, sizeof(small));
    CHECK(!strcmp(small, "10.0.0.0/8"), "cut at a whole entry: %s", small);
    netclass_mask_format(0, buf, sizeof(buf));
    CHECK(!strcmp(buf, ""), "no range");
    netclass_mask_format(~(uint64_t)0, buf, sizeof(buf));
    CHECK(netclass_mask_parse(buf) != 0 && strstr(buf, "fd00:ec2::254/128"),
          "every range: %s", buf);
}

int main(void)
{
    test_table();
    test_modes();
    test_text();
    return t_done("u-netclass");
}
