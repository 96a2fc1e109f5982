/*
 * seen-internal.h: what the seen-set client (seen/seen.c,
 * seen/client-mod.c) shares with the frontier core (frontier/frontier.c:
 * open adopts a layout, admit writes into the seen-set).
 *
 * Code outside of the seen and frontier modules should use only the
 * public functions defined in "seen.h", and should *not* include this
 * file.
 *
 * Thread rules: as struct frontier.
 */
#ifndef DC_SEEN_INTERNAL_H
#define DC_SEEN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

struct frontier;
struct frontier_url;

/* Layout strings recorded in <prefix>:meta seen_layout: Lua over intset
 * buckets (dedup.h), or one dcrawl-seen module key "<prefix>:{p}:S" per
 * partition (seen/module/seen-module.c). */
#define SEEN_LAYOUT_B256 "b256-i64"
#define SEEN_LAYOUT_MOD "mod-u64"
/* Most members the seen script gets for one bucket in one group. */
#define SEEN_GROUP_MAX 1024

/* seen.c: CONFIG GET set-max-intset-entries into f->intset_entries. */
void seen__probe_intset(struct frontier *f);

/* client-mod.c */
/* Sets f->have_module from COMMAND INFO dcseen.add (one round trip). */
int seen__probe_module(struct frontier *f);
/* Key of partition p's module seen-set: "<prefix>:{p}:S". */
int seen__modkey(const struct frontier *f, int p, char *out, size_t cap);
/* fp as 8 little-endian bytes at out (the module's blob format). */
void seen__put_le64(unsigned char *out, uint64_t fp);
/* seen_batch and seen_layout's text in layout mod-u64. */
int seen__mod_batch(struct frontier *f, const struct frontier_url *u,
                    size_t n, int check_only, unsigned char *isnew);
void seen__mod_layout(const struct frontier *f, char *out, size_t cap);

#endif
