/*
 * conf-table.c: the one table of configuration keys, and the typed parse
 * and format of a single value.
 *
 * Every key is one row: name, type, field offset, default as text, bounds
 * and one line of help. conf_init parses the defaults through the same
 * code as user input, so a default outside its own bounds is caught by the
 * unit test. conf/dcrawl.conf documents the same keys in the same order.
 *
 * To add a key: add the field to struct conf (conf.h), a row here, and an
 * entry to conf/dcrawl.conf; tests/unit/u-conf.c checks the two agree.
 *
 * Bounds: numbers are checked against [min, max]; strings have their
 * length in bytes checked against [min, max] and may not hold control
 * characters (they end up in HTTP headers and Redis keys).
 *
 * The table is constant; everything here is reentrant.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf-internal.h"
#include "dc-limits.h"

#define DC_SCOPE_SUFFIXES                                                   \
    ".jpg .jpeg .png .gif .webp .svg .ico .bmp .tif .tiff .css .js .mjs "   \
    ".zip .gz .tgz .bz2 .xz .7z .rar .tar .pdf .mp3 .mp4 .m4a .m4v .avi "  \
    ".mov .wmv .webm .ogg .wav .flac .woff .woff2 .ttf .eot .exe .dmg .iso " \
    ".apk .msi .deb .rpm"

/* clang-format off */
/* offsetof(struct conf, f), failing to compile unless f has type T. */
#define FIELD(f, T)                                                        \
    (offsetof(struct conf, f) +                                            \
     0 * sizeof(char[_Generic(((struct conf *)0)->f, T: 1, default: -1)]))

#define OPT_BOOL(n, f, d, h) { n, CONF_BOOL, FIELD(f, int), d, 0, 1, h }
#define OPT_INT(n, f, d, lo, hi, h) { n, CONF_INT, FIELD(f, int), d, lo, hi, h }
#define OPT_INT64(n, f, d, lo, hi, h) \
    { n, CONF_INT64, FIELD(f, int64_t), d, lo, hi, h }
#define OPT_BYTES(n, f, d, lo, hi, h) \
    { n, CONF_BYTES, FIELD(f, int64_t), d, lo, hi, h }
#define OPT_DOUBLE(n, f, d, lo, hi, h) \
    { n, CONF_DOUBLE, FIELD(f, double), d, lo, hi, h }
#define OPT_STRING(n, f, d, lo, hi, h) \
    { n, CONF_STRING, FIELD(f, char *), d, lo, hi, h }
/* clang-format on */

#define KiB 1024.0
#define MiB (1024.0 * KiB)
#define GiB (1024.0 * MiB)
#define TiB (1024.0 * GiB)

const struct conf_opt conf__opts[] = {
    OPT_STRING("crawl.user_agent", crawl_user_agent,
               "dcrawl/" DCRAWL_VERSION " (+https://example.org/dcrawl)", 6, 512,
               "User-Agent sent with every request; the product token must "
               "stay `dcrawl`, put a page about your crawl in the comment"),
    OPT_INT("crawl.depth", crawl_depth, "3", 0, DC_DEPTH_MAX,
            "link depth to crawl; seeds are depth 0"),
    OPT_STRING("crawl.node_id", crawl_node_id, "", 0, 64,
               "name of this node in output files (empty = the hostname)"),
    OPT_DOUBLE("politeness.delay", politeness_delay, "1.0", 0, 3600,
               "seconds between two requests to the same host"),
    OPT_INT("politeness.host_connections", politeness_host_connections, "1", 1,
            256, "most connections open to one host at a time"),
    OPT_INT("politeness.ip_connections", politeness_ip_connections, "2", 1,
            1024, "most transfers in flight to one IP address at a time"),
    OPT_DOUBLE("politeness.max_retry_after", politeness_max_retry_after,
               "600.0", 0, 86400,
               "longest Retry-After (429/503) honoured, in seconds"),
    OPT_DOUBLE("politeness.max_backoff", politeness_max_backoff, "300.0", 1,
               86400, "longest host back-off after repeated 5xx/timeouts"),
    OPT_BOOL("robots.obey", robots_obey, "true",
             "fetch robots.txt and skip the URLs it disallows"),
    OPT_DOUBLE("robots.expiry", robots_expiry, "86400.0", 60, 30 * 86400.0,
               "seconds a host's robots.txt rules are kept before a refetch"),
    OPT_DOUBLE("robots.max_crawl_delay", robots_max_crawl_delay, "30.0", 0,
               3600, "largest Crawl-delay honoured, in seconds (longer "
               "ones are cut to this)"),
    OPT_INT64("robots.cache_hosts", robots_cache_hosts, "65536", 16, 1e8,
              "hosts whose robots.txt rules a node keeps in memory"),
    OPT_BOOL("robots.sitemaps", robots_sitemaps, "true",
             "fetch the sitemaps robots.txt lists and crawl their URLs"),
    OPT_BYTES("sitemap.max_bytes", sitemap_max_bytes, "10M", 1024, GiB,
              "largest sitemap read, in bytes after gunzip; the rest is "
              "ignored"),
    OPT_INT64("sitemap.max_urls", sitemap_max_urls, "50000", 1, 1e8,
              "most URLs taken from one host's sitemaps"),
    OPT_INT("fetch.concurrency", fetch_concurrency, "256", 1, 10000,
            "most transfers in flight on this node"),
    OPT_DOUBLE("fetch.timeout", fetch_timeout, "30.0", 0.1, 3600,
               "seconds one whole transfer may take"),
    OPT_DOUBLE("fetch.connect_timeout", fetch_connect_timeout, "10.0", 0.1, 600,
               "seconds to establish a connection"),
    OPT_BYTES("fetch.max_bytes", fetch_max_bytes, "10M", 1024, 16 * GiB,
              "largest response body kept; longer bodies are truncated"),
    OPT_INT("fetch.max_redirects", fetch_max_redirects, "5", 0, 50,
            "redirects followed per URL"),
    OPT_BOOL("fetch.http2", fetch_http2, "true",
             "offer HTTP/2 to servers that support it"),
    OPT_BOOL("fetch.verify_tls", fetch_verify_tls, "true",
             "verify server certificates and host names"),
    OPT_STRING("fetch.ca_file", fetch_ca_file, "", 0, 4096,
               "PEM file of CA certificates to verify servers with (empty "
               "= the system's)"),
    OPT_STRING("fetch.ca_path", fetch_ca_path, "", 0, 4096,
               "directory of hashed CA certificates (c_rehash) to verify "
               "servers with (empty = the system's)"),
    OPT_INT("fetch.retries", fetch_retries, "1", 0, 10,
            "retries after a timeout, connection error, 5xx or 429"),
    OPT_DOUBLE("fetch.offline_wait", fetch_offline_wait, "60.0", 0, 86400,
               "seconds a node that reaches no host pauses, its failures "
               "put back uncounted, before they count again (0 = never)"),
    OPT_STRING("fetch.accept_encoding", fetch_accept_encoding, "gzip, deflate",
               0, 256, "Accept-Encoding offered (empty = no compression)"),
    OPT_BYTES("fetch.low_speed_limit", fetch_low_speed_limit, "1K", 1, GiB,
              "bytes per second below which a transfer is too slow"),
    OPT_DOUBLE("fetch.low_speed_time", fetch_low_speed_time, "10.0", 1, 3600,
               "seconds a transfer may stay below low_speed_limit"),
    OPT_INT("parse.threads", parse_threads, "0", 0, 64,
            "HTML parser threads (0 = one per core)"),
    OPT_BYTES("parse.max_bytes", parse_max_bytes, "256K", 4 * KiB, GiB,
              "HTML bytes handed to the parser per page (the rest is "
              "archived but not parsed)"),
    OPT_STRING("parse.content_types", parse_content_types,
               "text/html application/xhtml+xml", 0, 1024,
               "media types parsed for links (space separated); others are "
               "archived only"),
    OPT_INT("url.max_length", url_max_length, "2048", 16, 8192,
            "longest canonical URL kept, in bytes"),
    OPT_BOOL("url.strip_index_html", url_strip_index_html, "true",
             "treat /dir/index.html as /dir/"),
    OPT_STRING("scope.mode", scope_mode, "any", 3, 6,
               "links followed: any, host (same host as the linking page) "
               "or domain (same registrable domain)"),
    OPT_STRING("scope.include", scope_include, "", 0, 4096,
               "POSIX EREs (space separated); when set, a link must match "
               "one"),
    OPT_STRING("scope.exclude", scope_exclude, "", 0, 4096,
               "POSIX EREs (space separated); a link matching one is "
               "dropped"),
    OPT_STRING("scope.skip_suffixes", scope_skip_suffixes,
               DC_SCOPE_SUFFIXES, 0, 4096,
               "path suffixes of non-page resources that are not fetched "
               "(space separated, case-insensitive)"),
    OPT_INT("scope.max_repeated_segments", scope_max_repeated_segments, "3",
            0, 1000, "most times one path segment may occur in a link's "
            "path (0 = no limit)"),
    OPT_INT64("scope.host_budget", scope_host_budget, "0", 0, 1e12,
              "URLs queued per host over the whole crawl (0 = no limit)"),
    OPT_STRING("scope.private_addresses", scope_private_addresses, "seeds",
               4, 5,
               "fetches to loopback, private, link-local and other "
               "non-public addresses: deny, seeds (only the ranges the "
               "seeds' hosts are in) or allow"),
    OPT_BOOL("noise.enabled", noise_enabled, "true",
             "drop navigation-noise links (calendars, sort orders, ...)"),
    OPT_DOUBLE("noise.link_ratio", noise_link_ratio, "0.25", 0, 1,
               "a block whose link text / text is above this is navigation"),
    OPT_STRING("noise.block_rule", noise_block_rule, "signals", 5, 8,
               "signals: a block above link_ratio is navigation when a "
               "second signal agrees; ratio: every block above link_ratio "
               "(the rule as first written); repeated: only when it recurs "
               "on the host's pages"),
    OPT_STRING("noise.blocks", noise_blocks,
               "td th p div nav header footer aside section article main "
               "table form", 1, 1024,
               "tags that cut the DOM into blocks (space separated)"),
    OPT_DOUBLE("noise.similarity", noise_similarity, "0.8", 0, 1,
               "LCS similarity at which a URL joins a cluster"),
    OPT_INT("noise.max_clusters", noise_max_clusters, "256", 1, 65536,
            "URL clusters kept per host (least recently used dropped)"),
    OPT_INT("noise.template_min", noise_template_min, "2", 1, 8,
            "distinct URLs a nav cluster needs before it drops look-alikes"),
    OPT_INT64("noise.cluster_budget", noise_cluster_budget, "1000", 0,
              1e12, "URLs a cluster may admit to the frontier (0 = no "
              "limit)"),
    OPT_BOOL("noise.log", noise_log, "false",
             "write every link the noise filter drops, and why, to "
             "OUT/noise-<node>.tsv"),
    OPT_INT("frontier.partitions", frontier_partitions, "1024", 1, 65536,
            "host partitions of the frontier; fixed for the life of a crawl"),
    OPT_DOUBLE("frontier.lease", frontier_lease, "300.0", 1, 86400,
               "seconds a node holds a host before another may take it"),
    OPT_INT("cluster.virtual_nodes", cluster_virtual_nodes, "200", 1, 4096,
            "points per node on the consistent-hash ring"),
    OPT_DOUBLE("cluster.load_factor", cluster_load_factor, "1.05", 0, 16,
               "bounded loads: a node owns at most this times the mean "
               "number of partitions (below 1 = no bound)"),
    OPT_STRING("cluster.partition_by", cluster_partition_by, "host", 2, 6,
               "what maps to a partition: host, domain (registrable, "
               "libpsl) or ip"),
    OPT_DOUBLE("cluster.partition_lease", cluster_partition_lease, "10.0",
               0.5, 3600, "seconds a partition stays owned without renewal"),
    OPT_DOUBLE("cluster.node_timeout", cluster_node_timeout, "5.0", 0.3,
               3600, "seconds without a heartbeat before a node is dead"),
    OPT_DOUBLE("cluster.heartbeat", cluster_heartbeat, "1.0", 0.1, 600,
               "seconds between a node's heartbeats"),
    OPT_STRING("redis.prefix", redis_prefix, "dc", 1, 64,
               "prefix of every Redis key of this crawl"),
    OPT_STRING("redis.url", redis_url, "", 0, 4096,
               "redis://[user][:password]@host:port/db, unix:/path, "
               "redis-cluster://host:port,... or "
               "redis-sentinel://host:port,.../name (empty = an embedded "
               "redis-server for `dcrawl crawl`)"),
    OPT_STRING("redis.module", redis_module, "", 0, 4096,
               "seen-set module the embedded redis-server loads (empty = "
               "dcrawl-seen.so next to the dcrawl binary, none = not loaded)"),
    OPT_DOUBLE("redis.retry", redis_retry, "60.0", 0, 86400,
               "seconds a lost Redis connection is retried before the "
               "node gives up"),
    OPT_DOUBLE("redis.connect_wait", redis_connect_wait, "0.0", 0, 86400,
               "seconds node and seed keep trying to reach Redis when "
               "they start (0: fail at once)"),
    OPT_STRING("redis.user", redis_user, "", 0, 128,
               "Redis ACL user to log in as (empty = the default user); "
               "a user in the URL wins"),
    OPT_STRING("redis.password", redis_password, "", 0, 511,
               "Redis password; set it with DCRAWL_REDIS_PASSWORD, not "
               "--set (ps shows the command line); a password in the URL "
               "wins"),
    OPT_STRING("redis.password_file", redis_password_file, "", 0, 4096,
               "file holding the Redis password (one line); a password "
               "in the URL wins"),
    OPT_INT64("dedup.cache_entries", dedup_cache_entries, "1048576", 16,
              1073741824.0, "URL fingerprints cached in memory per node"),
    OPT_STRING("dedup.fingerprint", dedup_fingerprint, "murmur3", 3, 16,
               "URL fingerprint: murmur3 (MurmurHash3 x64) or md5; fixed "
               "for the life of a crawl"),
    OPT_BYTES("output.warc_max_bytes", output_warc_max_bytes, "1G", MiB, TiB,
              "size at which a WARC file is closed and the next one begun"),
    OPT_INT("output.gzip_level", output_gzip_level, "1", 0, 9,
            "gzip level of WARC records (1 = fastest, ISA-L igzip; 2-9 "
            "libdeflate; 0 = no compression)"),
    OPT_DOUBLE("output.progress_interval", output_progress_interval, "10.0",
               0, 86400, "seconds between progress lines when stderr is "
               "not a terminal (0 = none)"),
    OPT_STRING("output.metrics_listen", output_metrics_listen, "", 0, 256,
               "ADDR:PORT where the node serves Prometheus /metrics "
               "(\"\" = none)"),
};

const size_t conf__nopts = sizeof(conf__opts) / sizeof(conf__opts[0]);
_Static_assert(sizeof(conf__opts) / sizeof(conf__opts[0]) <= CONF_KEYS_MAX,
               "struct conf's origin[] is too small: raise CONF_KEYS_MAX");

const struct conf_opt *conf__find(const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < conf__nopts; i++)
        if (strlen(conf__opts[i].name) == len &&
            !memcmp(conf__opts[i].name, s, len))
            return &conf__opts[i];
    return NULL;
}

int conf_key_secret(const char *key)
{
    return key && (strcmp(key, "redis.url") == 0 ||
                   strcmp(key, "redis.password") == 0);
}

void conf__seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* --- formatting ------------------------------------------------------ */

/* Bytes with the largest power-of-1024 suffix that divides them. */
static void format_bytes(int64_t v, char *buf, size_t cap)
{
    static const char sfx[] = "KMGT";
    int i = -1;

    while (i < 3 && v != 0 && v % 1024 == 0) {
        v /= 1024;
        i++;
    }
    if (i < 0)
        snprintf(buf, cap, "%lld", (long long)v);
    else
        snprintf(buf, cap, "%lld%c", (long long)v, sfx[i]);
}

/* Shortest text that reads back as d, with ".0" on whole numbers. */
static void format_double(double d, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, cap, "%.17g", d);
    if (strspn(buf, "-0123456789") == strlen(buf) && strlen(buf) + 3 <= cap)
        strcat(buf, ".0");
}

static void format_num(enum conf_type t, double d, char *buf, size_t cap)
{
    if (t == CONF_DOUBLE)
        format_double(d, buf, cap);
    else if (t == CONF_BYTES)
        format_bytes((int64_t)d, buf, cap);
    else
        snprintf(buf, cap, "%lld", (long long)d);
}

const char *conf__format(const struct conf_opt *o, const struct conf *c,
                         char *buf, size_t cap)
{
    const char *p = (const char *)c + o->offset;

    switch (o->type) {
    case CONF_BOOL:
        return *(const int *)p ? "true" : "false";
    case CONF_INT:
        format_num(o->type, *(const int *)p, buf, cap);
        return buf;
    case CONF_INT64:
        snprintf(buf, cap, "%lld", (long long)*(const int64_t *)p);
        return buf;
    case CONF_BYTES:
        format_bytes(*(const int64_t *)p, buf, cap);
        return buf;
    case CONF_DOUBLE:
        format_double(*(const double *)p, buf, cap);
        return buf;
    case CONF_STRING:
        return *(char *const *)p ? *(char *const *)p : "";
    }
    return "";
}

/* "lo..hi" in o's own units. */
static void format_range(const struct conf_opt *o, char *buf, size_t cap)
{
    char lo[CONF_NUMLEN], hi[CONF_NUMLEN];

    format_num(o->type, o->min, lo, sizeof(lo));
    format_num(o->type, o->max, hi, sizeof(hi));
    snprintf(buf, cap, "%s..%s", lo, hi);
}

/* --- parsing --------------------------------------------------------- */

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    size_t i;

    for (i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* A decimal integer with an optional k/m/g/t suffix when `suffix`. */
static int parse_int64(const char *s, int suffix, int64_t *out)
{
    char *end;
    long long v;
    int64_t mult = 1;

    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s)
        return -1;
    if (suffix && *end) {
        const char *p = strchr("kmgt", tolower((unsigned char)*end));
        if (!p || !*p || end[1])
            return -1;
        mult = (int64_t)1 << (10 * (p - "kmgt" + 1));
        end++;
        if (v > INT64_MAX / mult || v < INT64_MIN / mult)
            return -1;
    }
    if (*end)
        return -1;
    *out = (int64_t)v * mult;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double d;

    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    d = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int check_string(const struct conf_opt *o, const char *s, char *err,
                        size_t errlen)
{
    size_t n = strlen(s);

    if (has_control(s)) {
        conf__seterr(err, errlen, "%s: control characters are not allowed", o->name);
        return DC_ECONFIG;
    }
    if ((n < o->min || n > o->max) && conf_key_secret(o->name)) {
        conf__seterr(err, errlen, "%s: value is %zu bytes long, allowed "
                     "%.0f..%.0f", o->name, n, o->min, o->max);
        return DC_ECONFIG;
    }
    if (n < o->min || n > o->max) {
        conf__seterr(err, errlen,
               "%s: value '%.64s%s' is %zu bytes long, "
               "allowed %.0f..%.0f",
               o->name, s, n > 64 ? "..." : "", n, o->min, o->max);
        return DC_ECONFIG;
    }
    if (!strcmp(o->name, "cluster.partition_by") && strcmp(s, "host") &&
        strcmp(s, "domain") && strcmp(s, "ip")) {
        conf__seterr(err, errlen,
               "%s: value '%.64s' is not one of host, domain, ip", o->name, s);
        return DC_ECONFIG;
    }
    if (!strcmp(o->name, "scope.private_addresses") && strcmp(s, "deny") &&
        strcmp(s, "seeds") && strcmp(s, "allow")) {
        conf__seterr(err, errlen,
               "%s: value '%.64s' is not one of deny, seeds, allow", o->name, s);
        return DC_ECONFIG;
    }
    if (!strcmp(o->name, "crawl.user_agent") && strncmp(s, "dcrawl", 6)) {
        conf__seterr(err, errlen,
               "%s: value '%.64s' must start with the product "
               "token 'dcrawl'",
               o->name, s);
        return DC_ECONFIG;
    }
    return DC_OK;
}

static int set_string(const struct conf_opt *o, struct conf *c,
                      const char *text, char *err, size_t errlen)
{
    char **field = (char **)((char *)c + o->offset);
    int rc = check_string(o, text, err, errlen);

    if (rc)
        return rc;
    free(*field);
    *field = xstrdup(text);
    return DC_OK;
}

/* Text to a number in o's units; -1 if it does not parse. */
static int parse_number(const struct conf_opt *o, const char *text, double *d,
                        int64_t *i)
{
    if (o->type == CONF_DOUBLE) {
        if (parse_double(text, d))
            return -1;
        return 0;
    }
    if (parse_int64(text, o->type == CONF_BYTES, i))
        return -1;
    *d = (double)*i;
    return 0;
}

static void store_number(const struct conf_opt *o, struct conf *c, double d,
                         int64_t i)
{
    char *p = (char *)c + o->offset;

    if (o->type == CONF_DOUBLE)
        *(double *)p = d;
    else if (o->type == CONF_INT)
        *(int *)p = (int)i;
    else
        *(int64_t *)p = i;
}

static const char *type_word(enum conf_type t)
{
    switch (t) {
    case CONF_INT:
    case CONF_INT64:
        return "an integer";
    case CONF_BYTES:
        return "a size in bytes (suffix k, m, g or t for powers of 1024)";
    case CONF_DOUBLE:
        return "a number";
    default:
        return "a value";
    }
}

static int set_number(const struct conf_opt *o, struct conf *c,
                      const char *text, char *err, size_t errlen)
{
    char range[2 * CONF_NUMLEN + 4];
    double d = 0;
    int64_t i = 0;

    format_range(o, range, sizeof(range));
    if (parse_number(o, text, &d, &i)) {
        conf__seterr(err, errlen, "%s: bad value '%.64s', want %s in %s", o->name,
               text, type_word(o->type), range);
        return DC_ECONFIG;
    }
    if (d < o->min || d > o->max) {
        conf__seterr(err, errlen, "%s: value '%.64s' out of range %s", o->name, text,
               range);
        return DC_ECONFIG;
    }
    store_number(o, c, d, i);
    return DC_OK;
}

int conf__parse(const struct conf_opt *o, struct conf *c, const char *text,
                char *err, size_t errlen)
{
    int b;

    switch (o->type) {
    case CONF_BOOL:
        if (parse_bool(text, &b)) {
            conf__seterr(err, errlen,
                   "%s: bad value '%.64s', want true/false, "
                   "yes/no, on/off or 1/0",
                   o->name, text);
            return DC_ECONFIG;
        }
        *(int *)((char *)c + o->offset) = b;
        return DC_OK;
    case CONF_STRING:
        return set_string(o, c, text, err, errlen);
    default:
        return set_number(o, c, text, err, errlen);
    }
}
