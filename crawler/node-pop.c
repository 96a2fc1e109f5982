/*
 * node-pop.c: the pop phase of the node loop (two timers of node.c's
 * table). Pop leases URLs of the current depth level from the frontier,
 * as many as there are free transfer slots (fetch.concurrency), takes
 * their hosts' robots.txt answers and noise state from Redis
 * (node-store.c) and dispatches them (node-fetch.c). When nothing is
 * ready it sleeps until the earliest ready time of an owned host; while
 * transfers run it asks the frontier only every BUSY_POP_MS (their
 * completions kick it sooner).
 *
 * Depth levels: the node serves one depth at a time and moves to the next
 * when frontier_level says no URL of a lower depth is queued or in flight
 * anywhere (checked every NODE_LEVEL_CHECK_MS while idle, or while the
 * next level is fetched ahead once this one has nothing left here: see
 * node-ahead.c).
 */
#include <stdint.h>
#include <stdlib.h>

#include "crawler.h"
#include "frontier.h"
#include "node-internal.h"
#include "noise.h"

#define POP_BATCH 512
#define BUSY_POP_MS 500
#define SEED_WAIT_MS 500 /* a daemon with an empty frontier */

/* Room for new leases. fetch.concurrency bounds the transfers at work
 * (running, or parked on their host's robots.txt); leases waiting out
 * their host's gap (one ahead per host, frontier_set_lease_ahead) may add
 * as many again. Pages the workers have not finished do not hold a slot:
 * under latency the next transfers run while the workers parse (their
 * backlog is bounded apart, by count and by bytes, so memory stays
 * bounded when parsing is the slower side). */
static size_t pop_room(struct node *n)
{
    size_t cap = (size_t)n->c->fetch_concurrency;
    size_t busy = fetcher_active(n->fetch) + n->parked;
    size_t held = busy + polite_waiting(n->polite);
    size_t room, bytes, backlog = workers_pending(n->workers, &bytes);
    if (busy >= cap || held >= 2 * cap || backlog >= cap ||
        bytes >= NODE_BACKLOG_BYTES)
        return 0;
    room = cap - busy < 2 * cap - held ? cap - busy : 2 * cap - held;
    return room > POP_BATCH ? POP_BATCH : room;
}

/* Lease up to room URLs of depth and dispatch them. Returns the number
 * leased; *next_ms is when that depth may have work again. */
static size_t fill_depth(struct node *n, int depth, size_t room, int64_t now,
                         int64_t *next_ms, int *rc)
{
    struct frontier_lease *l = NULL;
    size_t nl = 0, i;
    *next_ms = INT64_MAX;
    *rc = frontier_pop(n->f, depth, now, room, &l, &nl, next_ms);
    if (*rc)
        return 0;
    n->out[depth] += nl;
    if (nl > 0)
        n->popped_us = dc_mono_us(); /* node__ranges_refresh */
    if (n->c->robots_obey && nl > 0) { /* a miss only costs a fetch */
        robots_cache_round(n->robots); /* this batch's hosts stay */
        (void)node__robots_from_store(n, l, nl, now);
    }
    if (noise_state_used(n->noise) && nl > 0)
        node__noise_from_store(n, l, nl);
    for (i = 0; i < nl; i++)
        node__dispatch(n, &l[i], now);
    free(l); /* every lease was moved out */
    return nl;
}

/* Lease as many URLs as there is room for: the level's first; when none
 * of it is ready here, the next level's (node-ahead.c). Returns the number
 * leased; *next_ms is when to try again, *drained is set when the level
 * had nothing left here. */
static int fill_slots(struct node *n, int64_t now, int64_t *next_ms,
                      int *drained, int *rc)
{
    size_t room = pop_room(n), got;
    int64_t next2;
    *next_ms = INT64_MAX;
    *drained = 0;
    if (!room)
        return 0;
    got = fill_depth(n, n->level, room, now, next_ms, rc);
    if (*rc || got || *next_ms != INT64_MAX)
        return (int)got;
    *drained = 1;
    if (!node__ahead_allowed(n))
        return 0;
    got = fill_depth(n, n->level + 1, room, now, &next2, rc);
    n->ahead.active |= got > 0;
    n->st->pages_ahead += got;
    if (next2 < *next_ms)
        *next_ms = next2;
    return (int)got;
}

int node__timer_pop(struct node *n, struct node_timer *t, int64_t now)
{
    int64_t next = INT64_MAX;
    int rc = DC_OK, got, idle, drained;
    if (n->loop.stopping || n->level < 0)
        return DC_OK;
    rc = node__ahead_renew(n, now); /* before the held leases end */
    if (rc)
        return rc;
    n->pump_ok = 1; /* transfers may start while the pop waits */
    got = fill_slots(n, now, &next, &drained, &rc);
    n->pump_ok = 0;
    if (rc)
        return rc;
    n->next_ready = next;
    idle = node__local_idle(n);
    if (got)
        t->due = now;
    else if (next == INT64_MAX) /* nothing ready anywhere: while our own
         * transfers run, their completions kick us, so only poll slowly
         * for work other nodes admit (no spinning) */
        t->due = now + (idle ? NODE_LEVEL_CHECK_MS : BUSY_POP_MS);
    else /* a host becomes ready then (never spin on "now") */
        t->due = next > now ? next : now + 2;
    /* the level may be over: while the next one is fetched ahead, the
     * node is not idle, so ask as soon as this level is drained here.
     * The level timer takes the flag at its next run (it is not due at
     * every pop: a flag that lived one turn let a level's end wait for
     * the next pop, up to BUSY_POP_MS, when held pages kicked none) */
    n->loop.pop_empty = (!got && next == INT64_MAX && idle) ||
                        (drained && n->ahead.active);
    return DC_OK;
}

/* Work after a wait for seeds: `dcrawl seed --depth N` sets max_depth
 * before it uploads, so a daemon started before the seeds reads it now
 * (kept as it was when Redis does not answer). */
static void depth_refresh(struct node *n)
{
    n->seed_wait = 0;
    n->maxd = n->st->max_depth = node_max_depth(n->f, n->maxd);
}

/* After a pop that found nothing anywhere while idle: move to the next
 * depth level with work, leave (exit_when_idle, no work at all), or wait
 * for seeds (daemon). */
int node__timer_level(struct node *n, struct node_timer *t, int64_t now)
{
    struct node_timer *pop = &n->loop.timers[TIMER_POP];
    int64_t pend[NODE_MAX_DEPTH + 1];
    int lvl, rc;
    if (!n->loop.pop_empty)
        return DC_OK;
    n->loop.pop_empty = 0; /* one check per pop that found nothing */
    /* levels past maxd hold URLs whose link distance is within it */
    rc = frontier_level(n->f, NODE_MAX_DEPTH + 1, pend, &lvl);
    if (rc)
        return rc;
    t->due = now + t->period_ms;
    if (node__failover_check(n)) { /* a new server: its sitemaps' URLs */
        pop->due = now; /* may come again, the level is not over yet */
        return DC_OK;
    }
    if (lvl >= 0 && n->seed_wait)
        depth_refresh(n);
    n->waiting_level = lvl >= 0 && lvl == n->level;
    if (lvl != n->level && lvl >= 0) {
        n->level = lvl;
        n->ahead.active = 0;
        node__ahead_release_leases(n, now); /* their level has come */
        pop->due = now;
        n->loop.restart = 1;
    } else if (lvl < 0 && n->o->exit_when_idle) {
        n->loop.done = 1;
    } else if (lvl < 0) { /* daemon: wait for seeds */
        n->seed_wait = 1;
        pop->due = t->due = now + SEED_WAIT_MS;
    }
    return DC_OK;
}
