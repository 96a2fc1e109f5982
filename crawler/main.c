/*
 * main.c: `dcrawl <command> [options]`. Commands come from one table
 * (name, function, one-line summary, full help); each cmd_* parses its own
 * options, calls the modules and returns the exit status:
 *   0 success, 1 the work failed, 2 bad usage or an unusable setup (bad
 *   option, bad config, unreachable Redis).
 *
 * To add a command: write cmd_<name>() in crawler/cmd-<name>.c, declare it
 * in crawler.h, add a row below with its help text, add the file to
 * CMakeLists.txt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crawler.h"
#include "frontier.h"
#include "seen.h"
#include "parser.h"

#define DCRAWL_VERSION "0.1.0"

#define COMMON_HELP                                                        \
    "  --config FILE       read settings from FILE (see conf/dcrawl.conf)\n" \
    "  --set KEY=VALUE     override one setting, e.g. --set politeness.delay=0\n" \
    "                      (repeatable; environment DCRAWL_<SECTION>_<KEY> too)\n" \
    "  -h, --help          this help\n"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
    const char *help;
};

static const struct command commands[] = {
    {"crawl", cmd_crawl, "crawl from seeds to a depth, then merge (one shot)",
     "usage: dcrawl crawl --seeds FILE --depth N --out DIR [options] [URL...]\n"
     "\n"
     "Crawls every page reachable from the seeds within N link hops, writes\n"
     "DIR/depth-<d>/ (WARC + JSON lines), merges into DIR/merged/ and prints a\n"
     "summary. Without --redis a private redis-server is started on a unix\n"
     "socket inside DIR and stopped at the end.\n"
     "\n"
     "Exit status 0; 1 when no page got any HTTP response (then one line per\n"
     "seed host on stderr says why, e.g. a certificate or DNS error) or the\n"
     "crawl failed; 2 on bad usage or settings.\n"
     "\n"
     "  --seeds FILE        seed URLs, one per line ('-' = stdin; # comments)\n"
     "  --depth N           link hops from the seeds (default crawl.depth = 3)\n"
     "  --out DIR           output directory (must not hold an earlier crawl\n"
     "                      unless --redis continues that crawl)\n"
     "  --redis URL         use this Redis: redis://host:port[/db], unix:///path,\n"
     "                      redis-cluster://host:port[,host:port...]\n"
     "  --id ID             node id used in output file names (default hostname)\n"
     "  -q, --quiet         no summary\n" COMMON_HELP},
    {"seed", cmd_seed, "upload seed URLs to a crawl's Redis",
     "usage: dcrawl seed --redis URL [--depth N] [options] FILE|- [FILE...]\n"
     "\n"
     "Canonicalizes and deduplicates the URLs (one per line; blank lines and\n"
     "# comments skipped) and queues the new ones at depth 0. Prints accepted /\n"
     "already seen / rejected counts; each rejected line is reported on stderr\n"
     "with its line number, and the other lines still load.\n"
     "\n"
     "  --redis URL         the crawl's Redis (or redis.url / DCRAWL_REDIS_URL)\n"
     "  --depth N           set the crawl's depth limit (link hops from seeds)\n" COMMON_HELP},
    {"node", cmd_node, "run a fetch node against a crawl's Redis",
     "usage: dcrawl node --redis URL --out DIR [--exit-when-idle] [options]\n"
     "\n"
     "The node daemon: leases URLs from the frontier, fetches, parses, admits\n"
     "new links and writes DIR/depth-<d>/<id>-<seq>.{warc.gz,jsonl}. Runs\n"
     "until SIGINT/SIGTERM (in-flight pages are finished and written, then it\n"
     "exits 0) or, with --exit-when-idle, until nothing is queued or in flight;\n"
     "then it exits 1 if it handled URLs and none got an HTTP response (one\n"
     "line per seed host it gave up on says why).\n"
     "\n"
     "  --redis URL         the crawl's Redis (or redis.url / DCRAWL_REDIS_URL)\n"
     "  --out DIR           output directory\n"
     "  --id ID             node id (default crawl.node_id, else the hostname);\n"
     "                      a restarted node with the same id takes back at once\n"
     "                      the URLs it held when it died\n"
     "  --exit-when-idle    exit when the crawl has nothing left to do\n"
     "  -q, --quiet         no summary\n" COMMON_HELP},
    {"status", cmd_status, "show a crawl's nodes, partitions and queues",
     "usage: dcrawl status --redis URL [--json] [--watch [SECONDS]] [options]\n"
     "\n"
     "Reads the crawl's Redis (nothing is written) and shows the nodes (live,\n"
     "or dead while their figures remain: id, host, state, partitions owned,\n"
     "transfers in flight, pages, pages/s, age of the last heartbeat), the\n"
     "partitions (owned, and those with pending work but no owner), per depth\n"
     "the hosts with queued URLs (ready / waiting on politeness / at their\n"
     "connection limit) and the URLs queued, in flight, done, failed and\n"
     "skipped, and a stalls line: hosts waiting on politeness vs nodes with no\n"
     "work. Exit status 0, 1 on a Redis error, 2 on bad usage.\n"
     "\n"
     "  --redis URL         the crawl's Redis (or redis.url / DCRAWL_REDIS_URL)\n"
     "  --json              one JSON object per frame (fields: README, Status)\n"
     "  --watch [SECONDS]   show it again every SECONDS (default 2) until\n"
     "                      SIGINT/SIGTERM; --json --watch prints JSON lines\n" COMMON_HELP},
    {"merge", cmd_merge, "merge per-depth output into DIR/merged",
     "usage: dcrawl merge DIR [--out OUTDIR] [--keep highest-score|shortest-url]\n"
     "                       [--add FILE.warc.gz]... [--mem MB] [--tmp DIR]\n"
     "\n"
     "Reads DIR/depth-*/ of every node and writes OUTDIR (default DIR/merged):\n"
     "depth-<d>.warc.gz per depth, pages.jsonl, index.cdxj (CDXJ, sorted) and\n"
     "summary.json. One copy per URL (the most recent); one full copy per\n"
     "payload digest, the other URLs with that payload become revisit records.\n"
     "Memory stays bounded (external sort); outputs appear only when complete.\n"
     "Torn records at a file's end are skipped with a warning.\n"
     "\n"
     "  --out OUTDIR        where to write (default DIR/merged)\n"
     "  --keep POLICY       which content duplicate keeps its body:\n"
     "                      highest-score (default: most in-links during the\n"
     "                      crawl, then shortest URL) or shortest-url\n"
     "  --add FILE          also merge a foreign WARC file (wget, Heritrix,\n"
     "                      warcio; its pages go to depth 0); broken files are\n"
     "                      reported and skipped; repeatable\n"
     "  --mem MB            sort buffer budget (default 64)\n"
     "  --tmp DIR           where sort runs go (default OUTDIR)\n"
     "  -h, --help          this help\n"},
    {"dedup", cmd_dedup, "print the URLs of a list that a crawl has not seen",
     "usage: dcrawl dedup --redis URL [--check-only] [-j N] [options] [FILE...|-]\n"
     "\n"
     "Reads URLs, one per line (blank lines and # comments skipped; no FILE =\n"
     "stdin), canonicalizes and fingerprints them, checks them against the\n"
     "crawl's seen-set and prints the new ones (canonical form, input order),\n"
     "marking them seen. A URL printed here is never crawled later, and a URL\n"
     "already crawled or queued is never printed. Bad lines go to stderr with\n"
     "their line numbers; totals go to stderr at the end.\n"
     "\n"
     "  --redis URL         the crawl's Redis (or redis.url / DCRAWL_REDIS_URL)\n"
     "  --check-only        print the new URLs without marking them seen\n"
     "  -j N                canonicalize on N threads (default 1)\n"
     "  -q, --quiet         no totals\n" COMMON_HELP},
    {"robots", cmd_robots, "check URLs against a robots.txt file or a site's",
     "usage: dcrawl robots FILE|URL [--agent NAME] URL...\n"
     "\n"
     "Prints `allowed URL` or `disallowed URL` for each URL, as the crawler\n"
     "would decide for the product token NAME (default: the token of\n"
     "crawl.user_agent). FILE is a robots.txt on disk; given an http(s) URL,\n"
     "that host's /robots.txt is fetched with the crawler's fetch rules and a\n"
     "first line says which rule applied, e.g. `# robots.txt: 404 -> allow all`.\n"
     "Crawl-delay and Sitemap lines follow as `# ...` comments. Exit status 0,\n"
     "or 2 for bad usage or an unreadable FILE.\n"
     "\n"
     "  --agent NAME        product token to match user-agent lines against\n" COMMON_HELP},
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

int main(int argc, char **argv)
{
    const struct command *cmd;
    int i;
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
        fputs(cmd->help, stdout);
        return 0;
    }
    cmd = find(argv[1]);
    if (!cmd) {
        fprintf(stderr, "dcrawl: '%s' is not a command (see dcrawl --help)\n",
                argv[1]);
        return 2;
    }
    for (i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(cmd->help, stdout);
            return 0;
        }
    return cmd->fn(argc - 1, argv + 1);
}

/* ---------------------------------------------- options shared by cmds */

int cli_conf_arg(struct cli_conf *cc, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "--config") && strcmp(a, "--set"))
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "dcrawl: %s needs a value\n", a);
        return -1;
    }
    if (!strcmp(a, "--config")) {
        cc->config_file = argv[++*i];
    } else {
        if (cc->nsets == (int)(sizeof(cc->sets) / sizeof(cc->sets[0]))) {
            fprintf(stderr, "dcrawl: too many --set options\n");
            return -1;
        }
        cc->sets[cc->nsets++] = argv[++*i];
    }
    return 1;
}

void cli_conf_kv(struct cli_conf *cc, const char *key, const char *val)
{
    if (cc->nkv < (int)(sizeof(cc->keys) / sizeof(cc->keys[0]))) {
        cc->keys[cc->nkv] = key;
        cc->vals[cc->nkv++] = val;
    }
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
    if (frontier_open(f, redis, c, id, err, sizeof(err))) {
        fprintf(stderr, "dcrawl %s: %s\n", cmd, err);
        return 2;
    }
    if (seen_layout(*f, err, sizeof(err)))
        fprintf(stderr, "dcrawl %s: %s\n", cmd, err);
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

int cli_conf_apply(const struct cli_conf *cc, struct conf *c)
{
    char err[512];
    int i;
    conf_init(c);
    if (cc->config_file && conf_load_file(c, cc->config_file, err, sizeof(err)))
        goto fail;
    if (conf_load_env(c, err, sizeof(err)))
        goto fail;
    for (i = 0; i < cc->nsets; i++)
        if (conf_set(c, cc->sets[i], err, sizeof(err))) {
            fprintf(stderr, "dcrawl: --set %s: %s\n", cc->sets[i], err);
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
