/*
 * admit.c: frontier_admit. A batch is sorted by partition; each partition
 * touched gets one call of the admit script (frontier/lua/admit.lua, or
 * admit-mod.lua in the seen-set layout mod-u64), all in one pipeline. The
 * script inserts each URL into the seen-set if absent and queues it when
 * it was, so a URL is "new" exactly once whoever asks, and never marked
 * seen without being queued. A partition that gets its first URL is
 * marked in <prefix>:used (held.c), and the local ready index learns the
 * partition may have a ready host now (lease.c).
 *
 * Thread rules: as struct frontier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dedup.h"
#include "frontier.h"
#include "frontier-internal.h"
#include "seen-internal.h"

/* ---- admit ---- */

static int admit_add(struct frontier *f, struct frontier_call *c, int p,
                     const struct frontier_url *u)
{
    char key[512], member[32];

    if (f->seen_mod) { /* the fingerprint goes in the call's blob */
        frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:%.*s", f->prefix, p,
                             u->depth, (int)u->hostlen, u->host);
        frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p,
                             u->depth);
        frontier__strv_push(&c->args, u->url, u->len);
        frontier__strv_push(&c->args, u->host, u->hostlen);
        frontier__strv_pushf(&c->args, "%d", u->depth);
        return DC_OK;
    }
    if (dedup_seen_key(f->prefix, p, u->fp, key, sizeof(key)) ||
        dedup_seen_member(u->fp, member, sizeof(member)))
        return frontier__seterr(f, DC_EINVAL, "seen key too long");
    frontier__strv_pushs(&c->keys, key);
    frontier__strv_pushf(&c->keys, "%s:{%d}:q:%d:%.*s", f->prefix, p,
                         u->depth, (int)u->hostlen, u->host);
    frontier__strv_pushf(&c->keys, "%s:{%d}:h:%d", f->prefix, p, u->depth);
    frontier__strv_pushs(&c->args, member);
    frontier__strv_push(&c->args, u->url, u->len);
    frontier__strv_push(&c->args, u->host, u->hostlen);
    frontier__strv_pushf(&c->args, "%d", u->depth);
    return DC_OK;
}

static int admit_call(struct frontier *f, struct frontier_call *c, int p,
                      int64_t now)
{
    frontier__call_init(c, f->seen_mod ? FRONTIER_SCRIPT_ADMIT_MOD
                                       : FRONTIER_SCRIPT_ADMIT);
    frontier__strv_pushf(&c->keys, "%s:{%d}:pend", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:stat", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:host", f->prefix, p);
    frontier__strv_pushf(&c->keys, "%s:{%d}:budget", f->prefix, p);
    if (f->seen_mod) {
        char key[512];
        if (seen__modkey(f, p, key, sizeof(key)))
            return frontier__seterr(f, DC_EINVAL, "seen key too long");
        frontier__strv_pushs(&c->keys, key);
    }
    frontier__strv_pushf(&c->args, "%lld", (long long)now);
    frontier__strv_pushf(&c->args, "%d", f->conns);
    frontier__strv_pushf(&c->args, "%lld", (long long)f->host_budget);
    return DC_OK;
}

/* mod layout: the fingerprints of URLs s[from .. to) (one partition) as
 * one blob, the call's last argument. */
static void admit_blob(struct frontier_call *c, const struct frontier_url *urls,
                       const struct frontier_slot *s, size_t from, size_t to)
{
    unsigned char *blob = xmalloc((to - from) * 8);

    for (size_t i = from; i < to; i++)
        seen__put_le64(blob + 8 * (i - from), urls[s[i].idx].fp);
    frontier__strv_push(&c->args, (const char *)blob, (to - from) * 8);
    free(blob);
}

static int admit_build(struct frontier *f, const struct frontier_url *urls,
                       const struct frontier_slot *s, size_t n,
                       struct frontier_call *calls, int64_t now)
{
    size_t c = 0, from = 0;

    for (size_t i = 0; i < n; i++) {
        int rc = DC_OK;
        if (i > 0 && s[i].part != s[i - 1].part)
            c++;
        if (i == 0 || s[i].part != s[i - 1].part) {
            from = i;
            rc = admit_call(f, &calls[c], s[i].part, now);
        }
        if (!rc)
            rc = admit_add(f, &calls[c], s[i].part, &urls[s[i].idx]);
        if (rc)
            return rc;
        if (f->seen_mod && (i + 1 == n || s[i + 1].part != s[i].part))
            admit_blob(&calls[c], urls, s, from, i + 1);
    }
    return DC_OK;
}

static int admit_read(struct frontier *f, redisReply **rep,
                      const struct frontier_url *urls, const struct frontier_slot *s,
                      size_t n, unsigned char *isnew, int64_t now)
{
    size_t c = 0, j = 0;

    for (size_t i = 0; i < n; i++, j++) {
        if (i > 0 && s[i].part != s[i - 1].part) {
            c++;
            j = 0;
        }
        if (rep[c]->type != REDIS_REPLY_ARRAY || j >= rep[c]->elements)
            return frontier__seterr(f, DC_EREDIS, "admit: bad reply");
        isnew[s[i].idx] = rep[c]->element[j]->integer == 1;
        if (rep[c]->element[j]->integer == 2)
            f->budget_refused++;
        if (isnew[s[i].idx])
            frontier__index_lower_at(f, urls[s[i].idx].depth, s[i].part, now);
    }
    return DC_OK;
}

static int check_url(const struct frontier_url *u)
{
    return u->url && u->host && u->hostlen > 0 && u->depth >= 0 && u->len > 0;
}

int frontier_admit(struct frontier *f, const struct frontier_url *urls,
                   size_t n, int64_t now_ms, unsigned char *isnew)
{
    now_ms = frontier__rnow(f, now_ms);
    struct frontier_call *calls = NULL;
    redisReply **rep = NULL;
    struct frontier_slot *s;
    size_t ncalls = 0, nall = 0, nmark = 0;
    int rc = DC_OK;

    if (n == 0)
        return DC_OK;
    s = xmalloc(n * sizeof(*s));
    for (size_t i = 0; i < n; i++) {
        if (!check_url(&urls[i])) {
            free(s);
            return frontier__seterr(f, DC_EINVAL, "admit: bad URL entry");
        }
        s[i].part = frontier_partition(f, urls[i].host, urls[i].hostlen);
        s[i].idx = i;
    }
    ncalls = frontier__slots_sort(s, n);
    /* one SETBIT <prefix>:used per partition first seen here, sent
     * before the admit calls in the same pipeline: a partition with
     * queued URLs is always marked used (frontier_level relies on it) */
    calls = xcalloc(2 * ncalls, sizeof(*calls));
    rep = xcalloc(2 * ncalls, sizeof(*rep));
    for (size_t i = 0; i < n; i++)
        if (i == 0 || s[i].part != s[i - 1].part)
            frontier__mark_used(f, s[i].part, calls, &nmark);
    rc = admit_build(f, urls, s, n, calls + nmark, now_ms);
    nall = nmark + ncalls;
    if (!rc)
        rc = frontier__run(f, calls, nall, rep);
    if (!rc)
        rc = admit_read(f, rep + nmark, urls, s, n, isnew, now_ms);
    for (size_t i = 0; !rc && i < n; i++)
        frontier__used_set(f, s[i].part);
    frontier__replies_free(rep, nall);
    free(rep);
    frontier__calls_free(calls, nall);
    free(s);
    return rc;
}

