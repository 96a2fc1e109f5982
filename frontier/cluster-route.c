/*
 * cluster-route.c: the frontier on a Redis Cluster, for URLs
 * "redis-cluster://[user][:password]@host:port[,host:port...]" (hiredis
 * 0.14 has no cluster client; this is the thin routing layer under
 * frontier__run/__pipe).
 *
 * Credentials (the URL's userinfo, else the settings', as redis-url.c):
 * every connection to a node logs in with AUTH before its first command,
 * so the masters learnt from CLUSTER SLOTS, the targets of MOVED and ASK
 * and every reconnect are logged in too. A refusal is DC_EAUTH.
 *
 * Slots. A key's slot is CRC16 (XMODEM) of its hash tag (the text between
 * the first '{' and the next '}', when not empty; else the whole key) mod
 * 16384, as in the Redis Cluster specification. Every per-partition key is
 * "<prefix>:{p}:...", so each script call (routed by its first key) stays
 * in one slot. The slot map (slot -> master) is read with CLUSTER SLOTS
 * from the first node that answers (seeds first, then every node learnt),
 * and read again after a MOVED reply or a connection error.
 *
 * A batch: every command is routed (its slot's master; FRONTIER_SLOT_ANY:
 * the first master; FRONTIER_SLOT_ALL: every master, e.g. SCRIPT LOAD, the
 * first error or else the first reply kept), appended to that master's
 * connection (one hiredis context per node), every connection flushed, and
 * then the replies read node by node and put back in command order.
 * Redirected commands are sent again in a later round: MOVED after the map
 * is read again, ASK as ASKING + the command to the named node (no map
 * change), TRYAGAIN / CLUSTERDOWN after a short pause. A command
 * redirected more than FRONTIER_CLUSTER_REDIRECTS times is an error.
 *
 * Errors are one line in f->err: no node answers, CLUSTER SLOTS refused
 * (not a cluster), a slot served by no master, a node that cannot be
 * reached. An I/O error drops that node's connection (the batch fails with
 * DC_EREDIS, the next batch connects again).
 *
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "conf.h"
#include "frontier.h"
#include "frontier-internal.h"

#define SLOTS 16384
#define RETRY_MS 50

struct cl_node {
    char host[256];
    int port;
    redisContext *c;
};

struct frontier_route {
    struct frontier_redis_addr cred; /* the URL's userinfo (user, pass) */
    const char *user, *pass;         /* to log in with: cred's or f's */
    int auth_failed;                 /* a node refused them */
    struct cl_node *node;   /* seeds first, then nodes learnt */
    size_t nnode, cap;
    int16_t slot[SLOTS];    /* node index of each slot's master, -1 none */
    int *master;            /* distinct slot owners, in slot order */
    size_t nmaster;
    int stale;              /* the map must be read again */
};

/* ---- slots ---- */

static unsigned crc16(const char *s, size_t n)
{
    unsigned crc = 0;

    for (size_t i = 0; i < n; i++) {
        crc ^= (unsigned)(unsigned char)s[i] << 8;
        for (int b = 0; b < 8; b++)
            crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff
                               : (crc << 1) & 0xffff;
    }
    return crc;
}

int frontier__key_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);

    if (open) {
        size_t rest = len - (size_t)(open + 1 - key);
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1) {
            key = open + 1;
            len = (size_t)(close - key);
        }
    }
    return (int)(crc16(key, len) & (SLOTS - 1));
}

/* Plain commands whose key is not args[1]: keyless ones go to one master
 * (ANY) or to every master (ALL); the others name the key's position. */
static const struct {
    const char *name;
    int key;
} routes[] = {
    {"SCRIPT", FRONTIER_SLOT_ALL},  {"FLUSHDB", FRONTIER_SLOT_ALL},
    {"FLUSHALL", FRONTIER_SLOT_ALL}, {"COMMAND", FRONTIER_SLOT_ANY},
    {"CONFIG", FRONTIER_SLOT_ANY},  {"INFO", FRONTIER_SLOT_ANY},
    {"PING", FRONTIER_SLOT_ANY},    {"TIME", FRONTIER_SLOT_ANY},
    {"MEMORY", 2},                  {"OBJECT", 2},
};

int frontier__call_slot(const struct frontier_call *c)
{
    size_t pos = 1;

    if (c->script >= 0)
        return c->keys.n ? frontier__key_slot(c->keys.v[0], c->keys.len[0])
                         : FRONTIER_SLOT_ANY;
    for (size_t i = 0; c->args.n && i < sizeof(routes) / sizeof(*routes); i++)
        if (strcasecmp(c->args.v[0], routes[i].name) == 0) {
            if (routes[i].key < 0)
                return routes[i].key;
            pos = (size_t)routes[i].key;
        }
    if (pos >= c->args.n)
        return FRONTIER_SLOT_ANY;
    return frontier__key_slot(c->args.v[pos], c->args.len[pos]);
}

/* ---- nodes ---- */

/* Index of node host:port, added when new (host may point into cl->node:
 * it is copied before the array grows). */
static int node_add(struct frontier_route *cl, const char *host,
                    size_t hlen, int port)
{
    char h[sizeof(cl->node->host)];

    if (hlen >= sizeof(h))
        hlen = sizeof(h) - 1;
    memcpy(h, host, hlen);
    host = h;
    for (size_t k = 0; k < cl->nnode; k++)
        if (cl->node[k].port == port && strlen(cl->node[k].host) == hlen &&
            memcmp(cl->node[k].host, host, hlen) == 0)
            return (int)k;
    xgrow((void **)&cl->node, &cl->cap, cl->nnode + 1, sizeof(*cl->node));
    memset(&cl->node[cl->nnode], 0, sizeof(*cl->node));
    memcpy(cl->node[cl->nnode].host, host, hlen);
    cl->node[cl->nnode].port = port;
    return (int)cl->nnode++;
}

static void node_drop(struct cl_node *n)
{
    if (n->c)
        redisFree(n->c);
    n->c = NULL;
}

/* An I/O error on node k: message, connection dropped, map stale. */
static int node_fail(struct frontier *f, int k, const char *what)
{
    struct cl_node *n = &f->rt->node[k];

    frontier__seterr(f, DC_EREDIS, "redis cluster: %s %s:%d: %s", what,
                     n->host, n->port,
                     n->c && n->c->errstr[0] ? n->c->errstr : "no connection");
    node_drop(n);
    f->rt->stale = 1;
    return DC_EREDIS;
}

/* AUTH on node k's new connection (every node, every reconnect). */
static redisContext *node_login(struct frontier *f, int k)
{
    struct frontier_route *cl = f->rt;
    struct cl_node *n = &cl->node[k];
    char where[300];
    int rc;

    snprintf(where, sizeof(where), strchr(n->host, ':') ? "cluster [%s]:%d"
             : "cluster %s:%d", n->host, n->port);
    rc = frontier__auth(f, n->c, cl->user, cl->pass, where);
    if (rc == DC_OK)
        return n->c;
    if (rc == DC_EAUTH)
        cl->auth_failed = 1;
    else
        node_fail(f, k, "cannot log in to");
    node_drop(n);
    cl->stale = 1;
    return NULL;
}

static redisContext *node_conn(struct frontier *f, int k)
{
    struct cl_node *n = &f->rt->node[k];
    if (n->c)
        return n->c;
    n->c = redisConnectWithTimeout(n->host, n->port,
                                   frontier__tv(frontier__io_ms(f, 0)));
    if (!n->c || n->c->err) {
        node_fail(f, k, "cannot connect to");
        return NULL;
    }
    redisSetTimeout(n->c, frontier__tv(frontier__io_ms(f, 1)));
    return node_login(f, k);
}

/* The command timeout (frontier__io_ms) on every open node connection. */
void frontier__route_timeouts(struct frontier *f)
{
    struct timeval cmd = frontier__tv(frontier__io_ms(f, 1));

    for (size_t k = 0; f->rt && k < f->rt->nnode; k++)
        if (f->rt->node[k].c)
            redisSetTimeout(f->rt->node[k].c, cmd);
}

/* "host:port" (or "[v6]:port"; port 6379 when absent) of text s[0..len). */
static int add_endpoint(struct frontier_route *cl, const char *s,
                        size_t len, const char *dflt_host)
{
    const char *colon = NULL, *h = s;
    size_t hlen;
    long port = 6379;

    for (size_t i = 0; i < len; i++)
        if (s[i] == ':')
            colon = s + i;
    if (len && s[0] == '[') {
        const char *end = memchr(s, ']', len);
        if (!end || (end + 1 < s + len && end[1] != ':'))
            return -1;
        if (colon && colon < end)
            colon = NULL;
        h = s + 1;
        hlen = (size_t)(end - h);
    } else {
        hlen = colon ? (size_t)(colon - s) : len;
    }
    if (colon) {
        char *e;
        port = strtol(colon + 1, &e, 10);
        if (e != s + len || colon + 1 == e || port < 1 || port > 65535)
            return -1;
    }
    if (hlen == 0 && dflt_host) {
        h = dflt_host;
        hlen = strlen(dflt_host);
    }
    if (hlen == 0 || hlen >= sizeof(cl->node->host))
        return -1;
    return node_add(cl, h, hlen, (int)port);
}

/* ---- the slot map ---- */

static int map_read(struct frontier_route *cl, int from, const redisReply *r)
{
    memset(cl->slot, 0xff, sizeof(cl->slot));
    cl->nmaster = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i], *m;
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[2]->type != REDIS_REPLY_ARRAY ||
            e->element[2]->elements < 2)
            return -1;
        m = e->element[2];
        long long lo = e->element[0]->integer, hi = e->element[1]->integer;
        if (m->element[0]->type != REDIS_REPLY_STRING ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER || lo < 0 || hi < lo ||
            hi >= SLOTS)
            return -1;
        const char *h = m->element[0]->str;
        if (!h[0] || strcmp(h, "?") == 0)
            h = cl->node[from].host;
        int k = node_add(cl, h, strlen(h), (int)m->element[1]->integer);
        for (long long s = lo; s <= hi; s++)
            cl->slot[s] = (int16_t)k;
    }
    cl->master = xrealloc(cl->master, (cl->nnode + 1) * sizeof(*cl->master));
    for (int s = 0; s < SLOTS; s++) {
        size_t j = 0;
        while (j < cl->nmaster && cl->master[j] != cl->slot[s])
            j++;
        if (cl->slot[s] >= 0 && j == cl->nmaster)
            cl->master[cl->nmaster++] = cl->slot[s];
    }
    return 0;
}

static int is_err(const redisReply *r, const char *what)
{
    return r->type == REDIS_REPLY_ERROR &&
           strncmp(r->str, what, strlen(what)) == 0;
}

static int map_refresh(struct frontier *f)
{
    struct frontier_route *cl = f->rt;
    char last[512] = "";
    int answered = 0;

    for (size_t k = 0; k < cl->nnode; k++) {
        redisContext *c = node_conn(f, (int)k);
        redisReply *r = c ? redisCommand(c, "CLUSTER SLOTS") : NULL;
        if (c)
            f->roundtrips++;
        if (c && !r)
            node_fail(f, (int)k, "lost connection to");
        if (!r) {
            if (!answered)
                snprintf(last, sizeof(last), "%s", f->err);
            continue;
        }
        int ok = r->type == REDIS_REPLY_ARRAY && map_read(cl, (int)k, r) == 0;
        if (is_err(r, "NOAUTH")) {
            freeReplyObject(r);
            return frontier__seterr(f, DC_EAUTH, "redis cluster %s:%d: "
                                    "authentication required (NOAUTH): give "
                                    "the password in redis.password_file or "
                                    "DCRAWL_REDIS_PASSWORD", cl->node[k].host,
                                    cl->node[k].port);
        }
        if (!ok)
            snprintf(last, sizeof(last), "redis cluster: CLUSTER SLOTS failed "
                     "at %s:%d (not a cluster?): %s", cl->node[k].host,
                     cl->node[k].port,
                     r->type == REDIS_REPLY_ERROR ? r->str : "bad reply");
        answered = 1;
        freeReplyObject(r);
        if (ok) {
            cl->stale = 0;
            return DC_OK;
        }
    }
    if (answered)
        return frontier__seterr(f, DC_EREDIS, "%s", last);
    if (cl->auth_failed)
        return frontier__seterr(f, DC_EAUTH, "%s", last);
    return frontier__seterr(f, DC_EREDIS, "redis cluster: no node of %zu "
                            "answers (last: %s)", cl->nnode, last);
}

/* ---- connect / free ---- */

void frontier__route_free(struct frontier_route **clp)
{
    struct frontier_route *cl = clp ? *clp : NULL;

    if (!cl)
        return;
    for (size_t k = 0; k < cl->nnode; k++)
        node_drop(&cl->node[k]);
    free(cl->node);
    free(cl->master);
    memset(&cl->cred, 0, sizeof(cl->cred));
    free(cl);
    *clp = NULL;
}

/* Userinfo and seeds of the URL text after the scheme into cl; NULL or
 * what is wrong. */
static const char *parse_seeds(struct frontier_route *cl, const char *s)
{
    const char *at = strrchr(s, '@');

    if (at && frontier__userinfo(&cl->cred, s, (size_t)(at - s)))
        return "has a malformed user or password";
    if (at)
        s = at + 1;
    if (strpbrk(s, "/?"))
        return "cannot name a database (a Redis Cluster has db 0 only)";
    for (const char *e; *s || cl->nnode == 0; s = *e ? e + 1 : e) {
        e = s + strcspn(s, ",");
        if (add_endpoint(cl, s, (size_t)(e - s), NULL) < 0)
            return "is malformed (want host:port[,host:port...])";
    }
    return NULL;
}

int frontier__route_connect(struct frontier *f)
{
    struct frontier_route *cl = xcalloc(1, sizeof(*cl));
    const char *bad = parse_seeds(cl, f->url + strlen(FRONTIER_CLUSTER_SCHEME));

    char shown[512];
    int rc;

    if (!bad && frontier__creds(f, &cl->cred, &cl->user, &cl->pass))
        bad = "names a user without a password (give redis.password_file "
              "or DCRAWL_REDIS_PASSWORD)";
    if (bad) {
        frontier__route_free(&cl);
        frontier_url_redact(f->url, shown, sizeof(shown));
        return frontier__seterr(f, DC_EINVAL, "redis-cluster URL %s: %s", bad,
                                shown);
    }
    f->rt = cl;
    rc = map_refresh(f);
    if (rc != DC_OK)
        frontier__route_free(&f->rt);
    return rc;
}

/* ---- batches ---- */

struct cl_call {
    int to, ask;     /* this round: node index (or FRONTIER_SLOT_ALL), ASKING */
    int nto, nask;   /* next round after an ASK redirect */
    int pending;
};


/* Route the pending calls of this round; connect their nodes. */
static int assign(struct frontier *f, const struct frontier_raw *c, size_t n,
                  struct cl_call *cc)
{
    struct frontier_route *cl = f->rt;
    int all = 0;

    for (size_t i = 0; i < n; i++) {
        if (!cc[i].pending)
            continue;
        all |= c[i].slot == FRONTIER_SLOT_ALL;
        cc[i].ask = cc[i].nask;
        cc[i].nask = 0;
        if (cc[i].ask)
            cc[i].to = cc[i].nto;
        else if (c[i].slot == FRONTIER_SLOT_ALL)
            cc[i].to = FRONTIER_SLOT_ALL;
        else if (c[i].slot == FRONTIER_SLOT_ANY && cl->nmaster)
            cc[i].to = cl->master[0];
        else if (c[i].slot >= 0 && c[i].slot < SLOTS)
            cc[i].to = cl->slot[c[i].slot];
        else
            cc[i].to = -1;
        if (cc[i].to == -1)
            cl->stale = 1; /* read the map again before giving up */
        if (cc[i].to == -1 && c[i].slot < 0)
            return frontier__seterr(f, DC_EREDIS, "redis cluster: no master "
                                    "serves any slot");
        if (cc[i].to == -1)
            return frontier__seterr(f, DC_EREDIS, "redis cluster: slot %d is "
                                    "not served by any master", c[i].slot);
    }
    for (size_t k = 0; all && k < cl->nmaster; k++)
        if (!node_conn(f, cl->master[k]))
            return DC_EREDIS;
    for (size_t i = 0; i < n; i++)
        if (cc[i].pending && cc[i].to >= 0 && !node_conn(f, cc[i].to))
            return DC_EREDIS;
    return DC_OK;
}

static int sent_to(const struct frontier_route *cl, const struct cl_call *c,
                   int k)
{
    if (c->to != FRONTIER_SLOT_ALL)
        return c->to == k;
    for (size_t j = 0; j < cl->nmaster; j++)
        if (cl->master[j] == k)
            return 1;
    return 0;
}

/* One reply of call i: kept, or the call redirected to a later round. */
static void take(struct frontier *f, struct cl_call *cc, redisReply *r,
                 redisReply **rep, int *retry)
{
    const char *sp;

    if (cc->to == FRONTIER_SLOT_ALL) {
        if (!*rep || (r->type == REDIS_REPLY_ERROR &&
                      (*rep)->type != REDIS_REPLY_ERROR)) {
            if (*rep)
                freeReplyObject(*rep);
            *rep = r;
        } else {
            freeReplyObject(r);
        }
        return;
    }
    if (is_err(r, "MOVED ")) {
        f->rt->stale = 1;
    } else if (is_err(r, "ASK ") && (sp = strchr(r->str + 4, ' '))) {
        cc->nto = add_endpoint(f->rt, sp + 1, strlen(sp + 1),
                               f->rt->node[cc->to].host);
        cc->nask = cc->nto >= 0;
    } else if (is_err(r, "TRYAGAIN") || is_err(r, "CLUSTERDOWN")) {
        *retry = 1;
    } else {
        cc->pending = 0;
        *rep = r;
        return;
    }
    frontier__seterr(f, DC_EREDIS, "redis cluster: %s", r->str);
    freeReplyObject(r);
}

/* Appending failed (out of memory): no connection may keep half a batch. */
static int drop_all(struct frontier *f, int k)
{
    node_fail(f, k, "cannot write to");
    for (size_t j = 0; j < f->rt->nnode; j++)
        node_drop(&f->rt->node[j]);
    return DC_EREDIS;
}

/* Send this round's calls, every node's pipeline written before reading. */
static int round_trip(struct frontier *f, const struct frontier_raw *c,
                      size_t n, struct cl_call *cc, redisReply **rep,
                      int *retry)
{
    struct frontier_route *cl = f->rt;
    size_t nn = cl->nnode;
    int rc = DC_OK, done;

    for (int k = 0; k < (int)nn; k++)
        for (size_t i = 0; i < n; i++)
            if (cc[i].pending && sent_to(cl, &cc[i], k) &&
                ((cc[i].ask &&
                  redisAppendCommand(cl->node[k].c, "ASKING") != REDIS_OK) ||
                 redisAppendFormattedCommand(cl->node[k].c, c[i].cmd,
                                             c[i].len) != REDIS_OK))
                return drop_all(f, k);
    for (size_t k = 0; k < nn; k++)
        do {
            if (cl->node[k].c &&
                redisBufferWrite(cl->node[k].c, &done) != REDIS_OK) {
                rc = node_fail(f, (int)k, "cannot write to");
                break;
            }
        } while (cl->node[k].c && !done);
    for (int k = 0; k < (int)nn; k++)
        for (size_t i = 0; i < n && cl->node[k].c; i++) {
            void *r = NULL, *a = NULL;
            if (!cc[i].pending || !sent_to(cl, &cc[i], k))
                continue;
            if ((cc[i].ask && redisGetReply(cl->node[k].c, &a) != REDIS_OK) ||
                redisGetReply(cl->node[k].c, &r) != REDIS_OK) {
                rc = node_fail(f, k, "lost connection to");
                break;
            }
            if (a)
                freeReplyObject(a);
            take(f, &cc[i], r, &rep[i], retry);
        }
    for (size_t i = 0; i < n; i++)
        if (cc[i].to == FRONTIER_SLOT_ALL)
            cc[i].pending = 0;
    return rc;
}

int frontier__route_pipe(struct frontier *f, const struct frontier_raw *c,
                           size_t n, redisReply **rep)
{
    struct cl_call *cc = xcalloc(n ? n : 1, sizeof(*cc));
    int rc = DC_OK, left = (int)n, retry = 0, reconnected = 0;

    memset(rep, 0, n * sizeof(*rep));
    for (size_t i = 0; i < n; i++)
        cc[i].pending = 1;
    for (int round = 0; left && !rc; round++) {
        if (round > FRONTIER_CLUSTER_REDIRECTS) {
            rc = DC_EREDIS; /* f->err holds the last redirect */
            break;
        }
        if (retry) {
            struct timespec ts = {0, RETRY_MS * 1000000L * round};
            nanosleep(&ts, NULL);
        }
        retry = 0;
        if (f->rt->stale && (rc = map_refresh(f)) != DC_OK)
            break;
        rc = assign(f, c, n, cc);
        if (rc && !reconnected && f->rt->stale) {
            reconnected = 1; /* node down, slot unserved: read the map again */
            rc = DC_OK;
            continue;
        }
        if (!rc)
            rc = round_trip(f, c, n, cc, rep, &retry);
        left = 0;
        for (size_t i = 0; i < n; i++)
            left += cc[i].pending;
    }
    if (rc)
        frontier__replies_free(rep, n);
    free(cc);
    return rc;
}
