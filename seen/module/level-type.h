/*
 * level-type.h: one crawl depth of one partition as a single native value
 * (type "dcfrontq"), the frontier's native queue layout: what the ready
 * set h:<d> (a ZSET host -> score) and the host queues q:<d>:<host> (a
 * LIST each) hold in the Redis layout, in one key, h:<d>.
 *
 * Why: with the Redis types a host visit of the pop touches about twenty
 * cold objects at 30 M queued URLs (the keyspace entry of the queue key,
 * its quicklist, node and listpack, the skiplist nodes and the dict entry
 * of the ready set, ...). Here a host is one slot of an open-addressing
 * table (hash inline, so probing reads no host), one record holding its
 * score and its queue bytes, and one entry of a binary heap whose score
 * and first name bytes are inline, so sifting reads no host record.
 *
 * Semantics, one for one with the Redis layout, so the commands built on
 * it (pop-module.c, complete-module.c, admit-module.c) give the same
 * answers in the same order:
 *   - the ready set: a host is in it or not, with a score; the hosts with
 *     a score below FRONT_BUSY are ordered by (score, name bytes) as a
 *     ZSET orders them (busy hosts are kept apart: nothing ranges over
 *     them); lvl_exists is the set's EXISTS (not empty);
 *   - a host's queue: a list of byte strings, pushed and popped at either
 *     end; removing the first copy of a string (LREM q 1 s).
 * A host record lives while it is in the set or its queue is not empty.
 *
 * Ownership: the value belongs to its key (freed by the type's free).
 * A struct lvl_host pointer is valid until the next call that may free
 * it (lvl_host_gc, lvl_zrem, a queue pop that empties it).
 *
 * Thread rules: Redis's main thread.
 */
#ifndef DC_LEVEL_TYPE_H
#define DC_LEVEL_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "module-api.h"

#define LVL_TYPE_NAME "dcfrontq" /* nine characters with the version */
#define LVL_ENCVER 1

struct lvl_host;
struct lvl;

extern RedisModuleType *lvl_type;

/* Register the type and its commands (OnLoad): DCFRONT.QRESTORE here,
 * the others in level-cmds.c (lvl_cmds_register). */
int lvl_register(RedisModuleCtx *ctx);
int lvl_cmds_register(RedisModuleCtx *ctx);

/* The level held by an open key: NULL when the key is empty (and !create)
 * or holds another type (*wrong = 1). create: an empty key gets a new,
 * empty level. */
struct lvl *lvl_of(RedisModuleKey *k, int create, int *wrong);

/* The key's set is not empty (ZSET EXISTS). */
int lvl_exists(const struct lvl *l);

/* Delete the key when its level holds nothing, then close it. */
void lvl_close(RedisModuleKey *k);

/* A host's record, found or (create) made. */
struct lvl_host *lvl_host(struct lvl *l, const char *name, size_t len,
                          int create);
const char *lvl_host_name(const struct lvl_host *h, size_t *len);

/* ready set */
int lvl_inset(const struct lvl_host *h);
double lvl_score(const struct lvl_host *h);
/* ZADD: xx = only when in the set already. */
void lvl_zadd(struct lvl *l, struct lvl_host *h, double score, int xx);
void lvl_zrem(struct lvl *l, struct lvl_host *h);
/* The earliest score below FRONT_BUSY, or -1. */
long long lvl_ready(struct lvl *l);
/* The first hosts with score <= max (at most n), in the set's order, into
 * out; they leave the heap (not the set) until lvl_zadd, lvl_zrem or
 * lvl_restore. Returns how many. */
size_t lvl_take(struct lvl *l, double max, size_t n, struct lvl_host **out);
/* Back into the heap at its score, when still in the set and out. */
void lvl_restore(struct lvl *l, struct lvl_host *h);
/* Entries in the heap, stale ones included: at least what lvl_take can
 * return. */
size_t lvl_heap_size(const struct lvl *l);
/* Cache warming for the pops to come (pop-module.c), in two steps so
 * that no step waits for memory: lvl_prefetch_run, the records of the
 * first n hosts of the ready order (at most LVL_WARM_MAX, the run's and
 * the heap's top); later, once those are in, lvl_prefetch_next, their
 * names, queue heads and table slots, with the hashes of their names
 * into hv (otab_hash, as the host-field map's); returns how many. */
#define LVL_WARM_MAX 64
void lvl_prefetch_run(const struct lvl *l, size_t n);
size_t lvl_prefetch_next(const struct lvl *l, size_t n, uint64_t *hv);
/* The same for one host whose record is in cache: its name, queue head
 * and table slot; returns the hash of its name. */
uint64_t lvl_prefetch_host(const struct lvl *l, const struct lvl_host *h);
/* Cache warming for a lookup of name to come (lvl_host): its table slot,
 * or with rec its record (reads the slots). */
void lvl_prefetch_name(const struct lvl *l, const char *name, size_t len,
                       int rec);
/* The first host with a score below FRONT_BUSY (NULL: none). */
struct lvl_host *lvl_first(struct lvl *l);

/* queue */
size_t lvl_qlen(const struct lvl_host *h);
void lvl_push(struct lvl *l, struct lvl_host *h, int head, const char *s,
              size_t n);
/* A push at the tail of tag (when not 0) then s: qenc's form
 * (front_qsplit) without a copy. */
void lvl_push_tag(struct lvl *l, struct lvl_host *h, char tag,
                  const char *s, size_t n);
/* The first string (pointer into the record, valid until the next push
 * on the host), or NULL when the queue is empty. */
const char *lvl_pop(struct lvl *l, struct lvl_host *h, size_t *n);
/* The queue's strings in order: *at starts at 0; NULL after the last. */
const char *lvl_qnext(const struct lvl_host *h, size_t *at, size_t *n);
/* LREM 1: 1 when a copy of s was removed. */
int lvl_rem1(struct lvl *l, struct lvl_host *h, const char *s, size_t n);

/* The records one by one: *at starts at 0; NULL after the last. */
struct lvl_host *lvl_next(const struct lvl *l, size_t *at);

/* Free the record when it is neither in the set nor queues anything;
 * returns 1 when freed. */
int lvl_host_gc(struct lvl *l, struct lvl_host *h);

#endif
