/*
 * conf.h: what every dcrawl module shares: the error codes, the allocation
 * wrappers, and the crawl configuration.
 *
 * Errors: one enum generated from DC_ERR_MAP, append-only (never renumber or
 * remove a code). 0 is success; functions return `int` holding an enum
 * dc_err and never print; dc_strerror() names a code.
 *
 * Allocation: xmalloc() and friends abort on out-of-memory, so callers never
 * check for NULL. Buffers that hold network input are bounded by their own
 * limits and return DC_ETOOBIG instead.
 *
 * Configuration: a table of `section.key` entries (conf-table.c), each with a
 * type, bounds, a default and one line of help. Values are resolved in this
 * order, later wins: built-in default, config file (conf/dcrawl.conf format),
 * environment DCRAWL_<SECTION>_<KEY> (upper case), then --set section.key=v.
 * A struct conf holds every value as a typed field, and for each key where
 * its value came from (conf_origin: what `dcrawl config --show-origin`
 * prints); it is read-only after setup and safe to share between threads.
 *
 * DCRAWL_VERSION is the one version of dcrawl.
 */
#ifndef DC_CONF_H
#define DC_CONF_H

#include <stddef.h>
#include <stdint.h>

/* The one version of dcrawl: `dcrawl --version`, the User-Agent default,
 * CMake's project(VERSION) (read from this line). */
#define DCRAWL_VERSION "0.1.0"

#define DC_ERR_MAP(XX)                                                  \
    XX(OK, "success")                                                   \
    XX(NOMEM, "out of memory")                                          \
    XX(INVAL, "invalid argument")                                       \
    XX(IO, "i/o error")                                                 \
    XX(REDIS, "redis error")                                            \
    XX(TOOBIG, "too large")                                             \
    XX(PARSE, "parse error")                                            \
    XX(URL, "not a crawlable http(s) URL")                              \
    XX(NOTFOUND, "not found")                                           \
    XX(PROTO, "protocol error")                                         \
    XX(CONFIG, "configuration error")                                   \
    XX(CURL, "transfer setup error")                                    \
    XX(TRUNCATED, "truncated input")                                    \
    XX(DIGEST, "digest mismatch")                                       \
    XX(AUTH, "authentication failed")                                   \
    XX(FAILOVER, "redis master changed")                                \
    XX(OUTPUT, "cannot write the output")

enum dc_err {
#define XX(name, msg) DC_E##name,
    DC_ERR_MAP(XX)
#undef XX
    DC_ERR_COUNT
};
#define DC_OK DC_EOK

/* Name of an error code; never NULL ("unknown error" for bad codes). */
const char *dc_strerror(int err);

/* Allocation wrappers: abort with a message on out-of-memory. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Grow *p (holding *cap elements of size sz) to hold at least `need`. */
void xgrow(void **p, size_t *cap, size_t need, size_t sz);

/* Where a key's value came from (conf_origin). */
enum conf_source {
    CONF_FROM_DEFAULT = 0,
    CONF_FROM_FILE,   /* file and line */
    CONF_FROM_ENV,    /* DCRAWL_<SECTION>_<KEY> */
    CONF_FROM_SET,    /* conf_set: --set section.key=value */
    CONF_FROM_OPTION  /* conf_set_kv: a command's own option (--depth) */
};
struct conf_origin {
    enum conf_source source;
    int line;
    const char *file; /* the path given to conf_load_file (not copied) */
};
#define CONF_KEYS_MAX 96

/* The whole configuration. Field names follow `section_key`. */
struct conf {
    /* crawl */
    char *crawl_user_agent;
    int crawl_depth;
    char *crawl_node_id;
    /* politeness */
    double politeness_delay;
    int politeness_host_connections;
    int politeness_ip_connections;
    double politeness_max_retry_after;
    double politeness_max_backoff;
    int robots_obey;
    double robots_expiry;
    double robots_max_crawl_delay;
    int64_t robots_cache_hosts;
    int robots_sitemaps;
    /* sitemap */
    int64_t sitemap_max_bytes;
    int64_t sitemap_max_urls;
    /* fetch */
    int fetch_concurrency;
    double fetch_timeout;
    double fetch_connect_timeout;
    int64_t fetch_max_bytes;
    int fetch_max_redirects;
    int fetch_http2;
    int fetch_verify_tls;
    char *fetch_ca_file;
    char *fetch_ca_path;
    int fetch_retries;
    double fetch_offline_wait;
    char *fetch_accept_encoding;
    int64_t fetch_low_speed_limit;
    double fetch_low_speed_time;
    /* parse */
    int parse_threads;
    int64_t parse_max_bytes;
    char *parse_content_types;
    int url_max_length;
    int url_strip_index_html;
    /* scope */
    char *scope_mode;
    char *scope_include;
    char *scope_exclude;
    char *scope_skip_suffixes;
    int scope_max_repeated_segments;
    int64_t scope_host_budget;
    char *scope_private_addresses;
    /* noise */
    int noise_enabled;
    double noise_link_ratio;
    char *noise_block_rule;
    char *noise_blocks;
    double noise_similarity;
    int noise_max_clusters;
    int noise_template_min;
    int64_t noise_cluster_budget;
    int noise_log;
    /* frontier */
    int frontier_partitions;
    double frontier_lease;
    /* cluster */
    int cluster_virtual_nodes;
    double cluster_load_factor;
    char *cluster_partition_by;
    double cluster_partition_lease;
    double cluster_node_timeout;
    double cluster_heartbeat;
    char *redis_prefix;
    char *redis_url;
    char *redis_module;
    double redis_retry;
    double redis_connect_wait;
    char *redis_user;
    char *redis_password;
    char *redis_password_file;
    /* dedup */
    int64_t dedup_cache_entries;
    char *dedup_fingerprint;
    /* output */
    int64_t output_warc_max_bytes;
    int output_gzip_level;
    double output_progress_interval;
    char *output_metrics_listen;
    /* where each key's value came from, in table order */
    struct conf_origin origin[CONF_KEYS_MAX];
};

/* Fill *c with the built-in defaults. Release with conf_release(). */
void conf_init(struct conf *c);
/* Free the strings *c owns; *c may be reused after conf_init(). NULL ok. */
void conf_release(struct conf *c);

/*
 * Load a config file (INI style: `[section]` lines, `key = value`, `#` and
 * `;` comments). Unknown keys and bad values are errors: returns DC_ECONFIG
 * with "FILE:LINE: reason" in err (errlen bytes), leaving earlier keys set.
 */
int conf_load_file(struct conf *c, const char *path, char *err, size_t errlen);

/* Apply DCRAWL_<SECTION>_<KEY> environment variables. DC_ECONFIG on a bad value. */
int conf_load_env(struct conf *c, char *err, size_t errlen);

/* Apply one "section.key=value" assignment (as given to --set). */
int conf_set(struct conf *c, const char *assignment, char *err, size_t errlen);

/* Set one key to a value given separately. */
int conf_set_kv(struct conf *c, const char *key, const char *value, char *err,
                size_t errlen);

/* 1 for the keys whose value may hold a password (redis.url,
 * redis.password): messages never echo their values, and whoever shows
 * one (dcrawl config) hides the password. */
int conf_key_secret(const char *key);

/* Visit every key: name, current value as text, default as text, help. */
typedef void (*conf_visit_fn)(void *ud, const char *key, const char *value,
                              const char *def, const char *help);
void conf_foreach(const struct conf *c, conf_visit_fn fn, void *ud);

/* Where key's value came from, as text: "default", "file:PATH:LINE",
 * "env:DCRAWL_SECTION_KEY", "--set" or "command line"; NULL for an
 * unknown key. Written into buf (cap bytes). The file path is the one
 * conf_load_file was given: it must outlive c. */
const char *conf_origin(const struct conf *c, const char *key, char *buf,
                        size_t cap);

/* Milliseconds since the Unix epoch (wall clock) and a monotonic clock. */
int64_t dc_now_ms(void);
int64_t dc_mono_us(void);

/* ------------------------------------------------------ small helpers */

/* The value of hex digit c (either case), or -1. Inline: URL parsing
 * calls it per byte. */
static inline int dc_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
