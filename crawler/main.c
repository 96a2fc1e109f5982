/*
 * main.c: `dcrawl <command> [options]`. Commands come from one table
 * (name, function, one-line summary); each cmd_* parses its options with
 * its own option table (options.h: the same rows print its --help), calls
 * the modules and returns the exit status:
 *   0 success, 1 the work failed, 2 bad usage or an unusable setup (bad
 *   option, bad config, unreachable Redis).
 *
 * To add a command: write cmd_<name>() in crawler/cmd-<name>.c, declare it
 * in crawler.h with its struct opt_cmd beside it, add a row below, add the
 * file to CMakeLists.txt. Below main: the helpers the commands share
 * (settings, frontier, node id).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crawler.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

/* The commands: name, function, one-line summary for `dcrawl --help`.
 * Each command's options and help live beside it (struct opt_cmd in
 * cmd-<name>.c). */
static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"crawl", cmd_crawl, "crawl from seeds to a depth, then merge (one shot)"},
    {"seed", cmd_seed, "upload seed URLs to a crawl's Redis"},
    {"node", cmd_node, "run a fetch node against a crawl's Redis"},
    {"status", cmd_status, "show a crawl's nodes, partitions and queues"},
    {"merge", cmd_merge, "merge per-depth output into DIR/merged"},
    {"dedup", cmd_dedup, "print the URLs of a list that a crawl has not seen"},
    {"robots", cmd_robots, "check URLs against a robots.txt file or a site's"},
    {"config", cmd_config, "print every setting in effect (and where from)"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    size_t i;
    fprintf(out, "usage: dcrawl <command> [options]   (dcrawl <command> --help)\n\n"
                 "dcrawl " DCRAWL_VERSION ", a distributed web crawler.\n\n"
                 "commands:\n");
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n  --version   print the version\n  --help      this help\n"
                 "\nQuick start: dcrawl crawl --seeds seeds.txt --depth 2 --out out/\n");
}

static const struct command *find(const char *name)
{
    size_t i;
    for (i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/*
 * The stack of threads created without attributes: libcurl's resolver
 * threads (one per host name lookup, created and ended by the main thread)
 * and libmicrohttpd's. With the default (RLIMIT_STACK, 8 MiB) glibc keeps
 * only five spare stacks (its cache holds 40 MiB), so the lookups of a
 * level's new hosts (a hundred at once on a site that links to many
 * others) each cost an mmap, an munmap and their page tables on the main
 * thread: on bench/deadhosts.sh's gen site (1,101 pages linking to about
 * 240 other hosts) 15 ms of a 0.33 s node loop, while the site's one
 * connection waited. getaddrinfo needs far less than this; threads of our
 * own that need more ask for it (workers.c).
 */
#define THREAD_STACK ((size_t)512 << 10)

static void thread_stacks(void)
{
    pthread_attr_t a;

    if (pthread_attr_init(&a) != 0)
        return;
    if (pthread_attr_setstacksize(&a, THREAD_STACK) == 0)
        (void)pthread_setattr_default_np(&a);
    pthread_attr_destroy(&a);
}

int main(int argc, char **argv)
{
    const struct command *cmd;
    thread_stacks();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("dcrawl %s\n", DCRAWL_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "help") && argc > 2 && (cmd = find(argv[2]))) {
        char *help[] = {argv[2], "--help", NULL};
        return cmd->fn(2, help);
    }
    cmd = find(argv[1]);
    if (!cmd) {
        fprintf(stderr, "dcrawl: '%s' is not a command (see dcrawl --help)\n",
                argv[1]);
        return 2;
    }
    return cmd->fn(argc - 1, argv + 1);
}

/* ---------------------------------------------- options shared by cmds */

void cli_conf_kv(struct cli_conf *cc, const char *key, const char *val)
{
    int i;
    for (i = 0; i < cc->nkv && strcmp(cc->keys[i], key); i++)
        ;
    if (i == (int)(sizeof(cc->keys) / sizeof(cc->keys[0])))
        abort(); /* more keys than options that set one: a bug */
    cc->keys[i] = key;
    cc->vals[i] = val;
    if (i == cc->nkv)
        cc->nkv++;
}

/* frontier_open, tried again while Redis cannot be reached (DC_EREDIS:
 * refused, name not resolved yet, loading) for up to redis.connect_wait
 * seconds, back-off 0.1 s to 2 s; one line on stderr when it waits. */
static int open_waiting(const char *cmd, const char *redis,
                        const struct conf *c, const char *id,
                        struct frontier **f, char *err, size_t errlen)
{
    int64_t end = dc_mono_us() + (int64_t)(c->redis_connect_wait * 1e6);
    int64_t backoff_ms = 100;
    int rc, said = 0;
    while ((rc = frontier_open(f, redis, c, id, err, errlen)) == DC_EREDIS &&
           dc_mono_us() < end) {
        int64_t left_ms = (end - dc_mono_us()) / 1000;
        struct timespec ts;
        if (!said++)
            fprintf(stderr, "dcrawl %s: %s; trying again for up to %.0f s "
                    "(redis.connect_wait)\n", cmd, err, c->redis_connect_wait);
        if (backoff_ms > left_ms)
            backoff_ms = left_ms > 0 ? left_ms : 1;
        ts.tv_sec = (time_t)(backoff_ms / 1000);
        ts.tv_nsec = (long)(backoff_ms % 1000) * 1000000L;
        nanosleep(&ts, NULL);
        backoff_ms = backoff_ms * 2 > 2000 ? 2000 : backoff_ms * 2;
    }
    return rc;
}

int cli_frontier_open(const char *cmd, const char *redis, const struct conf *c,
                      char *id, size_t idcap, struct frontier **f)
{
    char err[512];
    if (!redis || !*redis)
        redis = c->redis_url;
    if (!redis || !*redis) {
        fprintf(stderr, "dcrawl %s: no Redis: give --redis URL\n", cmd);
        return 2;
    }
    cli_node_id(c, id, idcap);
    if (open_waiting(cmd, redis, c, id, f, err, sizeof(err))) {
        fprintf(stderr, "dcrawl %s: %s\n", cmd, err);
        return 2;
    }
    if (seen_layout(*f, err, sizeof(err)))
        fprintf(stderr, "dcrawl %s: %s\n", cmd, err);
    return 0;
}

int cli_open(const char *cmd, const struct cli_conf *cc, const char *redis,
             struct conf *c, char *id, size_t idcap, struct frontier **f)
{
    if (cli_conf_apply(cc, c))
        return 2;
    if (cli_frontier_open(cmd, redis, c, id, idcap, f)) {
        conf_release(c);
        return 2;
    }
    return 0;
}

/* scope.mode and the scope.include/exclude expressions are checked when
 * the settings are read, so a bad one is a usage error (exit 2). */
static int scope_check_conf(const struct conf *c, char *err, size_t errlen)
{
    struct parser_scope_conf sc = {c->scope_mode, c->scope_include,
                                   c->scope_exclude, c->scope_skip_suffixes,
                                   c->scope_max_repeated_segments};
    struct parser_scope *s = NULL;
    int rc = parser_scope_new(&s, &sc, err, errlen);
    parser_scope_free(&s);
    return rc;
}

/* fetch.ca_file must name a readable file and fetch.ca_path a readable
 * directory: found at start (exit 2), not as a TLS error on every URL. */
static int tls_check_conf(const struct conf *c, char *err, size_t errlen)
{
    struct stat sb;
    const char *f = c->fetch_ca_file, *d = c->fetch_ca_path;
    if (f && *f) {
        if (stat(f, &sb) || (S_ISREG(sb.st_mode) && access(f, R_OK))) {
            snprintf(err, errlen, "fetch.ca_file: %s: %s", f, strerror(errno));
            return DC_ECONFIG;
        }
        if (!S_ISREG(sb.st_mode)) {
            snprintf(err, errlen, "fetch.ca_file: %s: not a file", f);
            return DC_ECONFIG;
        }
    }
    if (d && *d) {
        if (stat(d, &sb) || (S_ISDIR(sb.st_mode) && access(d, R_OK | X_OK))) {
            snprintf(err, errlen, "fetch.ca_path: %s: %s", d, strerror(errno));
            return DC_ECONFIG;
        }
        if (!S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "fetch.ca_path: %s: not a directory", d);
            return DC_ECONFIG;
        }
    }
    return DC_OK;
}

/* How much of a --set assignment a message may show: the key alone when
 * the value may hold a password. */
static int set_shown_len(const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    const char *k = assignment + strspn(assignment, " \t");
    size_t n = eq ? (size_t)(eq - assignment) : strlen(assignment);
    char key[64];

    snprintf(key, sizeof(key), "%.*s", (int)(n - (size_t)(k - assignment)), k);
    key[strcspn(key, " \t")] = '\0';
    return conf_key_secret(key) ? (int)n : (int)strlen(assignment);
}

int cli_conf_apply(const struct cli_conf *cc, struct conf *c)
{
    char err[512];
    int i;
    conf_init(c);
    if (cc->config_file && conf_load_file(c, cc->config_file, err, sizeof(err)))
        goto fail;
    if (conf_load_env(c, err, sizeof(err)))
        goto fail;
    for (i = 0; i < (int)cc->sets.n; i++)
        if (conf_set(c, cc->sets.v[i], err, sizeof(err))) {
            fprintf(stderr, "dcrawl: --set %.*s: %s\n",
                    set_shown_len(cc->sets.v[i]), cc->sets.v[i], err);
            conf_release(c);
            return 2;
        }
    for (i = 0; i < cc->nkv; i++)
        if (conf_set_kv(c, cc->keys[i], cc->vals[i], err, sizeof(err)))
            goto fail;
    if (scope_check_conf(c, err, sizeof(err)))
        goto fail;
    if (tls_check_conf(c, err, sizeof(err)))
        goto fail;
    return 0;
fail:
    fprintf(stderr, "dcrawl: %s\n", err);
    conf_release(c);
    return 2;
}

void cli_node_id(const struct conf *c, char *out, size_t cap)
{
    char host[256] = "node";
    const char *src = c->crawl_node_id && *c->crawl_node_id ? c->crawl_node_id
                                                            : host;
    size_t i;
    if (src == host && gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "node");
    host[sizeof(host) - 1] = '\0';
    snprintf(out, cap, "%s", src);
    for (i = 0; out[i]; i++) /* ids name files: keep them tame */
        if (!(out[i] == '-' || out[i] == '_' || out[i] == '.' ||
              (out[i] >= '0' && out[i] <= '9') || (out[i] >= 'a' && out[i] <= 'z') ||
              (out[i] >= 'A' && out[i] <= 'Z')))
            out[i] = '_';
    if (!out[0])
        snprintf(out, cap, "node");
}
