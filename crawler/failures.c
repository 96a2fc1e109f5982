/*
 * failures.c: why URLs were given up, for the summary and the exit status.
 *
 * Every URL the node gives up on has a JSON line (node.c): an HTTP status,
 * or status 0 with libcurl's error text, or a "skipped" reason for a URL
 * never requested. Here the same failures are counted by kind for the
 * summary ("most frequent errors"): the message with what differs from
 * host to host taken out (the host itself, addresses, port numbers and
 * times), so "Failed to connect to a.test port 81 after 2 ms: ..." and
 * the same for b.test are one kind; the first host seen is kept as the
 * example. The table is bounded (NODE_ERRORS_MAX kinds; later kinds are
 * only counted).
 *
 * Seeds: the reason the first depth-0 URL of each host was given up is
 * kept, so a crawl in which no page got any response can say, per seed
 * host, why (failures_report): "dcrawl: URL: reason". "No page fetched"
 * means no HTTP response at all (any status, 4xx and 5xx included) for a
 * URL other than robots.txt and sitemaps; the commands exit 1 then.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "crawler.h"

uint64_t node_responses(const struct node_stats *st)
{
    return st->status[1] + st->status[2] + st->status[3] + st->status[4] +
           st->status[5];
}

static int word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* The host part of a "host[:port]" key ("[v6]:port" -> "v6"). */
static size_t host_name(const char *host, const char **name)
{
    const char *colon;
    *name = host;
    if (!host)
        return 0;
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        *name = host + 1;
        return end ? (size_t)(end - host - 1) : strlen(host + 1);
    }
    colon = strrchr(host, ':');
    return colon ? (size_t)(colon - host) : strlen(host);
}

/* Length of a dotted IPv4 address at s, or 0. */
static size_t ipv4_at(const char *s)
{
    size_t i = 0;
    int dots = 0, digits = 0;
    for (;; i++) {
        if (isdigit((unsigned char)s[i])) {
            digits++;
        } else if (s[i] == '.' && digits && dots < 3 &&
                   isdigit((unsigned char)s[i + 1])) {
            dots++;
            digits = 0;
        } else {
            break;
        }
    }
    return dots == 3 && digits ? i : 0;
}

void failures_normalize(const char *msg, const char *host, char *out,
                        size_t cap)
{
    const char *name;
    size_t nl = host_name(host, &name), i = 0, k = 0;
    int keep_num = !strncmp(msg, "HTTP ", 5); /* "HTTP 503": the status */

    if (!cap)
        return;
    while (msg[i] && k + 1 < cap) {
        const char *rep = NULL;
        size_t skip = 0, ip;
        int start = i == 0 || !word_char(msg[i - 1]);
        if (start && nl && !strncasecmp(msg + i, name, nl) &&
            !word_char(msg[i + nl]) && msg[i + nl] != '.') {
            rep = "HOST";
            skip = nl;
        } else if (start && (ip = ipv4_at(msg + i)) &&
                   !word_char(msg[i + ip])) {
            rep = "ADDR";
            skip = ip;
        } else if (start && isdigit((unsigned char)msg[i]) && !keep_num) {
            size_t e = i;
            while (isdigit((unsigned char)msg[e]))
                e++;
            if (!word_char(msg[e]) && msg[e] != '.') {
                rep = "N";
                skip = e - i;
            }
        }
        if (rep) {
            size_t rl = strlen(rep);
            if (k + rl + 1 > cap)
                break;
            memcpy(out + k, rep, rl);
            k += rl;
            i += skip;
        } else {
            out[k++] = msg[i++];
        }
    }
    out[k] = '\0';
}

void failures_count(struct node_stats *st, const char *prefix, const char *msg,
                    const char *host)
{
    char what[sizeof(st->errs[0].what)];
    size_t pl = strlen(prefix), i;
    struct node_error *e;

    snprintf(what, sizeof(what), "%s", prefix);
    if (pl < sizeof(what))
        failures_normalize(msg && *msg ? msg : "unknown error", host, what + pl,
                           sizeof(what) - pl);
    for (i = 0; i < st->nerrs; i++)
        if (!strcmp(st->errs[i].what, what)) {
            st->errs[i].n++;
            return;
        }
    if (st->nerrs == NODE_ERRORS_MAX) {
        st->errors_other++;
        return;
    }
    e = &st->errs[st->nerrs++];
    memcpy(e->what, what, sizeof(what));
    snprintf(e->host, sizeof(e->host), "%s", host ? host : "");
    e->n = 1;
}

void failures_seed(struct node_stats *st, const char *url, const char *host,
                   const char *why)
{
    struct node_seed_fail *s;
    size_t i;
    for (i = 0; i < st->nseed_fails; i++)
        if (!strcmp(st->seed_fails[i].host, host))
            return;
    if (st->nseed_fails == NODE_SEED_FAILS_MAX)
        return;
    s = &st->seed_fails[st->nseed_fails++];
    snprintf(s->host, sizeof(s->host), "%s", host);
    snprintf(s->url, sizeof(s->url), "%s", url);
    snprintf(s->why, sizeof(s->why), "%s", why);
}

int failures_report(FILE *out, const struct node_stats *st)
{
    size_t i;
    if (node_responses(st) || (!st->pages && !st->skipped))
        return 0;
    for (i = 0; i < st->nseed_fails; i++)
        fprintf(out, "dcrawl: %s: %s\n", st->seed_fails[i].url,
                st->seed_fails[i].why);
    if (!st->nseed_fails)
        fprintf(out, "dcrawl: no page could be fetched\n");
    return 1;
}
