/*
 * html.c: link extraction from HTML pages with gumbo: the design, the
 * driver (parser_parse_html), link resolution and output, big-body slices.
 * The rest lives in html-walk.c (the tree walk: blocks, text sums, page
 * directives), html-gumbo.c (gumbo's arena, the nesting guard),
 * html-slice.c (where a big body is cut) and html-strip.c (what gumbo is
 * given of it); struct parser is in html-internal.h.
 *
 * One struct parser per thread. It owns:
 *
 *  - an arena that gumbo allocates from (GumboOptions.allocator). Allocation
 *    bumps a pointer inside the newest chunk; gumbo's frees are no-ops except
 *    that freeing the most recent block gives it back (gumbo grows vectors
 *    and string buffers by allocate-copy-free, so this recovers most of the
 *    waste). The whole parse tree is dropped by resetting the arena, never by
 *    gumbo_destroy_output(). After a page that needed more than one chunk,
 *    all chunks are freed and the next page starts with one chunk as large
 *    as that page needed, capped at ARENA_KEEP_MAX; when later pages keep
 *    using only a small part of the kept chunk, it is replaced by a smaller
 *    one. A typical page reuses one warm chunk, and one huge page does not
 *    pin its memory forever.
 *
 *  - the walk state: an explicit stack (the tree is walked iteratively, so
 *    hostile nesting depth cannot overflow the C stack) and the list of raw
 *    link attribute values in document order. Each stack entry carries the
 *    context its node inherits (nearest block, inside a link, text
 *    excluded, inside a template), so no exit events are needed.
 *
 *  - blocks (parser_set_blocks): during the same walk, an element whose tag
 *    is in the block set opens a new block; each text node adds its
 *    collapsed length to its nearest block (and to link_text when under an
 *    <a>). After the walk one backward pass adds every block's sums to its
 *    parent (blocks are numbered in pre-order, so children come after
 *    parents), which gives subtree totals in O(blocks). Each unique link
 *    then keeps the occurrence block most likely to be content (not in
 *    semantic navigation, then the lowest ratio), so a URL that appears in
 *    both a menu and a paragraph counts as a paragraph link. The walk
 *    context also carries the semantic flags (semantic_ctx: inside
 *    nav/aside/menu/landmark roles, HTML-AAM's header/footer, inside
 *    main/article); an element that changes them opens a block whatever
 *    its tag, and each block records the flags it was opened with.
 *
 *  - the output: canonical URL strings in one character buffer, the link
 *    array, and an open-addressing hash set (indices into the link entries)
 *    that drops duplicates while keeping the first occurrence's order.
 *
 * <base href>: HTML says the first base element with an href, wherever it
 * is in the tree, sets the base for every link in the document, including
 * links that come before it. The walk therefore only collects raw values
 * (pointers into the gumbo tree, valid until the arena reset) and notes the
 * first base href; resolution happens after the walk, against the final
 * base. That is one tree walk and correct for a <base> placed in <body>.
 * Links inside <template> contents are collected like any other (gumbo
 * keeps them as ordinary children); a <base> inside a template is ignored,
 * as template contents belong to another document.
 *
 * Page directives, collected in the same walk: <meta name=robots> (or
 * named for the crawler's token) nofollow / noindex / none; rel=nofollow
 * on a and area drops that link; the first <link rel=canonical> and the
 * first <meta http-equiv=refresh> URL are resolved like links after the
 * walk (the refresh target is also a link). A page under meta nofollow
 * returns no links at all. Metas inside <template> are ignored.
 *
 * Big bodies (parser_set_limits): the first dom_max bytes, cut before a
 * tag, are the DOM described above; the rest is parsed slice by slice for
 * links only, see the "slices" section and html-slice.c.
 *
 * Nesting guard: gumbo's time is quadratic in the depth of unclosed
 * elements; parser__nest_guard() turns start tags beyond NEST_LIMIT
 * levels (by a cheap byte scan) into text before parsing. See its comment
 * in html-gumbo.c.
 *
 * Script and style content: gumbo spends a token per byte on it, and it
 * never holds a link nor counted text, so gumbo is given a copy without it
 * (parser__raw_strip() in html-strip.c; the tags stay, and pages it cannot
 * scan exactly, past math, frameset, an escaped script or an svg whose
 * end it cannot tell, keep it; an inline svg icon is copied as it is and
 * the scan goes on after it). Spans that hold nothing but text go too
 * when text is folded (unless span is a block tag): highlighted code is
 * mostly spans; and so do formatting elements that hold only text (code,
 * em, strong, ...; unless one of them is a block tag), when fewer than
 * three of their kind went to gumbo before (the Noah's Ark clause). Where
 * such a tag meets whitespace a cut mark stays, so text sums are those of
 * the whole page. The attributes that neither the walker nor the tree builder
 * reads go as well: most start tags keep only role, an a its href, rel
 * and role (class, id, title and style are a third of a documentation
 * page's bytes).
 * Each run of plain text between two tags is folded as well (the same
 * elements in the same order: see copy_data() in html-strip.c): with
 * blocks off, where nothing reads text, to one character; with blocks on
 * to a marker that carries the run's visible length, which the walker
 * counts instead of the text. On an ordinary page that is most of its
 * bytes, and gumbo's time falls ~7x.
 *
 * Buffers that grew beyond their KEEP limit on a large page are released at
 * the start of the next parse. Nothing here allocates per link.
 *
 * Thread rules: a struct parser is used by one thread at a time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <gumbo.h>

#include "conf.h"
#include "html-internal.h"
#include "parser-internal.h"
#include "parser.h"

/* ------------------------------------------------------------ helpers */

/* Forget a buffer that a big page grew past `keep` elements. */
static void buf_trim(void **p, size_t *cap, size_t keep)
{
    if (*cap > keep) {
        free(*p);
        *p = NULL;
        *cap = 0;
    }
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w;

    while (n >= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}
/* ------------------------------------------------------------ output */

static void set_base(struct parser *p, const char *page_url)
{
    size_t n;

    if (p->base_raw &&
        parser_url_canon(page_url, p->base_raw, p->base_raw_len, 0,
                         p->max_len, p->tmp, sizeof p->tmp, &n) == DC_OK) {
        page_url = p->tmp;
    } else {
        n = strlen(page_url);
    }
    xgrow((void **)&p->base, &p->base_cap, n + 1, 1);
    memcpy(p->base, page_url, n);
    p->base[n] = '\0';
}

/* An empty unique set of `want` slots (a power of two). */
static void set_alloc(struct parser *p, size_t want)
{
    if (want > p->set_cap) {
        free(p->set);
        p->set = xmalloc(want * sizeof *p->set);
        p->set_cap = want;
    }
    p->set_size = want;
    memset(p->set, 0, want * sizeof *p->set);
}

static void set_prepare(struct parser *p)
{
    size_t want = 16;

    while (want < p->nrefs * 2)
        want *= 2;
    set_alloc(p, want);
}

/* Add tmp[0..n) unless present; returns its entry index. The set never
 * fills: cap >= 2 * nrefs. */
static size_t add_link(struct parser *p, size_t n)
{
    uint64_t h = hash_bytes(p->tmp, n);
    size_t mask = p->set_size - 1, i = (size_t)h & mask;
    struct link_ent *e;

    for (; p->set[i]; i = (i + 1) & mask) {
        e = &p->ents[p->set[i] - 1];
        if (e->hash == h && e->len == n &&
            memcmp(p->sbuf + e->off, p->tmp, n) == 0)
            return p->set[i] - 1;
    }
    xgrow((void **)&p->ents, &p->ents_cap, p->nents + 1, sizeof *p->ents);
    xgrow((void **)&p->sbuf, &p->scap, p->slen + n + 1, 1);
    e = &p->ents[p->nents++];
    e->off = p->slen;
    e->len = n;
    e->hash = h;
    e->block = UINT32_MAX;
    memcpy(p->sbuf + p->slen, p->tmp, n);
    p->sbuf[p->slen + n] = '\0';
    p->slen += n + 1;
    p->set[i] = (uint32_t)p->nents;
    return p->nents - 1;
}

/* Occurrence of entry k in block b (blocks on). */
static void note_block(struct parser *p, size_t k, uint32_t b)
{
    struct link_ent *e = &p->ents[k];

    p->blocks[b].nlinks++;
    if (e->block == UINT32_MAX || parser__block_better(p, b, e->block))
        e->block = b;
}

/* Resolve raw[0..len) against the base into out (PARSER_URL_MAX). */
static const char *resolve_one(struct parser *p, const char *raw, size_t len,
                               char *out)
{
    size_t n;

    if (!raw || parser_url_canon(p->base, raw, len, p->flags, p->max_len,
                                 out, PARSER_URL_MAX, &n) != DC_OK)
        return NULL;
    return out;
}

/* Page directives: canonical, refresh, meta robots nofollow. */
static void directives(struct parser *p)
{
    p->res.meta_robots = p->meta_robots;
    p->res.canonical = p->canon_raw ? resolve_one(p, p->canon_raw,
                                                  strlen(p->canon_raw),
                                                  p->canonical)
                                    : NULL;
    p->res.refresh = resolve_one(p, p->refresh_raw, p->refresh_len,
                                 p->refresh);
    if (p->meta_robots & PARSER_META_NOFOLLOW) {
        p->nofollow += p->nrefs + (p->refresh_raw ? 1 : 0);
        p->nrefs = 0;
    } else if (p->refresh_raw) {
        parser__add_ref_n(p, p->refresh_raw, p->refresh_len, 0);
    }
    p->res.nofollow = p->nofollow;
}

/* Does raw[0..len) name a section of a page: a fragment after a path
 * ("page.html#part", not a bare "#part")? */
static int names_section(const char *raw, size_t len)
{
    const char *hash;

    while (len && parser__ws(*raw)) {
        raw++;
        len--;
    }
    hash = len ? memchr(raw, '#', len) : NULL;
    return hash && hash > raw && hash + 1 < raw + len;
}

/* Resolve the collected raw values into unique links. A slice's links
 * (past the DOM) have no block: they count as content. */
static void resolve_refs(struct parser *p, int slice)
{
    size_t i, n, k;

    for (i = 0; i < p->nrefs; i++) {
        p->res.found++;
        p->refs[i].ent = UINT32_MAX;
        if (parser_url_canon(p->base, p->refs[i].s, p->refs[i].len, p->flags,
                             p->max_len, p->tmp, sizeof p->tmp, &n) != DC_OK) {
            p->res.rejected++;
            continue;
        }
        k = add_link(p, n);
        p->refs[i].ent = (uint32_t)k;
        if (slice)
            p->ents[k].block = PARSER_BLOCK_NONE;
        else if (p->blocks_on) {
            note_block(p, k, p->refs[i].block);
            if (names_section(p->refs[i].s, p->refs[i].len))
                p->blocks[p->refs[i].block].nsect++;
        }
    }
}

/* nav_links, nav_mirror: per navigation region (the outermost block of
 * semantic navigation outside main content around a block; blocks come in
 * document order, so a parent's region is known before its children's),
 * its link occurrences and those whose link the page also has outside
 * navigation (where the link's block went); every block of the region
 * gets the totals. */
static void count_mirrors(struct parser *p)
{
    struct parser_block *bl = p->blocks;
    uint32_t *reg, b, c, r;
    size_t i;

    xgrow((void **)&p->region, &p->region_cap, p->nblocks, sizeof *reg);
    reg = p->region;
    for (b = 0; b < p->nblocks; b++)
        reg[b] = b && parser__block_in_nav(&bl[b]) &&
                         parser__block_in_nav(&bl[bl[b].parent])
                     ? reg[bl[b].parent]
                     : b;
    for (i = 0; i < p->nrefs; i++) {
        b = p->refs[i].block;
        if (p->refs[i].ent == UINT32_MAX || !parser__block_in_nav(&bl[b]))
            continue;
        r = reg[b];
        c = p->ents[p->refs[i].ent].block;
        bl[r].nav_links++;
        bl[r].nav_mirror += c != b && !parser__block_in_nav(&bl[c]);
    }
    for (b = 0; b < p->nblocks; b++) {
        if (reg[b] == b)
            continue;
        bl[b].nav_links = bl[reg[b]].nav_links;
        bl[b].nav_mirror = bl[reg[b]].nav_mirror;
    }
}

static void resolve_all(struct parser *p)
{
    directives(p);
    set_prepare(p);
    resolve_refs(p, 0);
    if (p->blocks_on)
        count_mirrors(p);
}

/* The result's arrays, after the DOM and every slice. */
static void output(struct parser *p)
{
    size_t i;

    xgrow((void **)&p->links, &p->links_cap, p->nents + 1, sizeof *p->links);
    for (i = 0; i < p->nents; i++) {
        p->links[i].url = p->sbuf + p->ents[i].off;
        p->links[i].len = p->ents[i].len;
        p->links[i].block = p->blocks_on ? p->ents[i].block : 0;
    }
    p->res.links = p->links;
    p->res.nlinks = p->nents;
    p->res.base = p->base;
    p->res.blocks = p->blocks_on ? p->blocks : NULL;
    p->res.nblocks = p->blocks_on ? p->nblocks : 0;
}

/* What gumbo parses of body[0..*len): nesting guarded, script and style
 * content left out, and text folded (html-strip.c): to one character with
 * blocks off (no text is counted: slices, or the noise filter off), to a
 * marker of its visible length with blocks on; *len becomes its length. */
static const char *gumbo_input(struct parser *p, const char *body,
                               size_t *len)
{
    size_t n;

    int how = (p->blocks_on ? PARSER_FOLD_LEN
                            : PARSER_FOLD_X | PARSER_STRIP_TEXT) |
              PARSER_STRIP_ATTRS | PARSER_STRIP_SPANS | PARSER_STRIP_FMT |
              (p->block_tag[GUMBO_TAG_A] ? 0 : PARSER_STRIP_ANCHORS);

    for (size_t k = 0; k < PARSER_LEAF_NAMES; k++) /* a block of its own */
        if (p->block_tag[parser__leaf_tags[k]]) /* stays, with its group */
            how &= ~(k < PARSER_LEAF_PHRASE ? PARSER_STRIP_SPANS
                                            : PARSER_STRIP_FMT);
    body = parser__nest_guard(p, body, *len);
    xgrow((void **)&p->stripped, &p->stripped_cap, *len + PARSER_RAW_ROOM, 1);
    n = parser__raw_strip(body, *len, p->stripped, how);
    if (n == *len && memcmp(body, p->stripped, n) == 0)
        return body;
    *len = n;
    return p->stripped;
}

/* ------------------------------------------------------------ slices */

/*
 * A body longer than dom_max: the first piece (cut before a tag, see
 * html-slice.c) is the page's DOM as above: blocks, <base>, canonical,
 * refresh and meta robots come from it. The rest is parsed slice by slice
 * into a tree of its own in the same arena, reset between slices, so
 * gumbo's memory is that of one slice. Each slice's links are resolved
 * against the DOM's base right after its walk (the raw values live in its
 * tree) and added to the same unique set, after the DOM's links in
 * document order. A <base>, canonical or refresh in a slice is ignored
 * (the first one counts, and the DOM's is settled); a meta robots nofollow
 * in a slice drops the page's links like one in the DOM. Under the DOM's
 * nofollow no slice is parsed.
 */

/* Grow the unique set so that `extra` more links fit (load <= 1/2). */
static void set_reserve(struct parser *p, size_t extra)
{
    size_t want = p->set_size, i, j, mask;

    while (want < (p->nents + extra) * 2)
        want *= 2;
    if (want == p->set_size)
        return;
    set_alloc(p, want);
    mask = want - 1;
    for (i = 0; i < p->nents; i++) {
        for (j = (size_t)p->ents[i].hash & mask; p->set[j]; j = (j + 1) & mask)
            ;
        p->set[j] = (uint32_t)(i + 1);
    }
}

static void parse_slices(struct parser *p, const char *body,
                         struct parser__cut *cut)
{
    static const char settled[] = "";
    int blocks_on = p->blocks_on;
    const char *s;
    size_t a, b, n;
    GumboOutput *g;

    /* "first one wins": the DOM's directives are final */
    if (!p->base_raw)
        p->base_raw = settled;
    if (!p->canon_raw)
        p->canon_raw = settled;
    if (!p->refresh_raw)
        p->refresh_raw = settled;
    p->blocks_on = 0;
    while (parser__cut_next(cut, p->slice_max, &a, &b)) {
        parser__arena_reset(&p->arena);
        p->nrefs = 0;
        p->res.slices++;
        n = b - a;
        s = gumbo_input(p, body + a, &n);
        g = gumbo_parse_with_options(&p->opts, s, n);
        if (g)
            parser__walk(p, g->root);
        if (p->meta_robots & PARSER_META_NOFOLLOW) {
            p->nofollow += p->nents + p->nrefs;
            p->nents = 0;
            break;
        }
        set_reserve(p, p->nrefs);
        resolve_refs(p, 1);
    }
    p->nrefs = 0;
    p->blocks_on = blocks_on;
    p->res.meta_robots = p->meta_robots;
    p->res.nofollow = p->nofollow;
}

/* ------------------------------------------------------------ public */

struct parser *parser_new(unsigned url_flags, size_t max_url_len)
{
    struct parser *p = xcalloc(1, sizeof *p);

    p->flags = url_flags;
    p->max_len = max_url_len && max_url_len < PARSER_URL_MAX
                     ? max_url_len
                     : PARSER_URL_MAX - 1;
    p->arena.next_size = ARENA_FIRST;
    p->opts = kGumboDefaultOptions;
    p->opts.allocator = parser__arena_alloc;
    p->opts.deallocator = parser__arena_free;
    p->opts.userdata = &p->arena;
    p->opts.max_errors = 0;
    p->dom_max = p->slice_max = SIZE_MAX;
    return p;
}

void parser_set_limits(struct parser *p, size_t dom_bytes, size_t slice_bytes)
{
    if (!p)
        return;
    p->dom_max = dom_bytes ? dom_bytes : SIZE_MAX;
    p->slice_max = slice_bytes ? slice_bytes : p->dom_max;
}

static void parser_begin(struct parser *p)
{
    parser__arena_reset(&p->arena);
    p->arena.peak = p->arena.bytes;
    buf_trim((void **)&p->stack, &p->stack_cap, COUNT_KEEP);
    buf_trim((void **)&p->refs, &p->refs_cap, COUNT_KEEP);
    buf_trim((void **)&p->region, &p->region_cap, COUNT_KEEP);
    buf_trim((void **)&p->sbuf, &p->scap, BUF_KEEP);
    buf_trim((void **)&p->ents, &p->ents_cap, COUNT_KEEP);
    buf_trim((void **)&p->set, &p->set_cap, 2 * COUNT_KEEP);
    buf_trim((void **)&p->links, &p->links_cap, COUNT_KEEP);
    buf_trim((void **)&p->scratch, &p->scratch_cap, BUF_KEEP);
    buf_trim((void **)&p->stripped, &p->stripped_cap, BUF_KEEP);
    buf_trim((void **)&p->blocks, &p->blocks_cap, COUNT_KEEP);
    p->nrefs = p->nents = p->slen = p->nblocks = 0;
    p->base_raw = NULL;
    p->base_raw_len = 0;
    p->canon_raw = p->refresh_raw = NULL;
    p->refresh_len = 0;
    p->meta_robots = 0;
    p->nofollow = 0;
    memset(&p->res, 0, sizeof p->res);
}

int parser_parse_html(struct parser *p, const char *page_url, const char *body,
                      size_t len, const struct parser_result **out)
{
    GumboOutput *g;
    struct parser__cut cut;
    const char *dom;
    size_t a, n, first = len;

    if (!p || !page_url || !out || (!body && len))
        return DC_EINVAL;
    parser_begin(p);
    if (!body)
        body = "";
    if (len > p->dom_max) {
        parser__cut_init(&cut, body, len);
        parser__cut_next(&cut, p->dom_max, &a, &first);
    }
    p->res.dom_len = first;
    n = first;
    dom = gumbo_input(p, body, &n);
    g = gumbo_parse_with_options(&p->opts, dom, n);
    if (g)
        parser__walk(p, g->root);
    if (p->blocks_on && !p->nblocks)
        parser__block_open(p, 0, 0);
    parser__blocks_sum(p);
    set_base(p, page_url);
    resolve_all(p);
    if (first < len && !(p->meta_robots & PARSER_META_NOFOLLOW))
        parse_slices(p, body, &cut);
    output(p);
    *out = &p->res;
    return DC_OK;
}

void parser_set_agent(struct parser *p, const char *token)
{
    if (p)
        snprintf(p->agent, sizeof p->agent, "%s", token ? token : "");
}

int parser_set_blocks(struct parser *p, const char *tags)
{
    unsigned char set[GUMBO_TAG_LAST + 1];
    char name[32];
    size_t n;
    GumboTag t;

    if (!p)
        return DC_EINVAL;
    memset(set, 0, sizeof set);
    while (tags && *tags) {
        tags += strspn(tags, " \t,");
        n = strcspn(tags, " \t,");
        if (!n)
            break;
        if (n >= sizeof name)
            return DC_EINVAL;
        memcpy(name, tags, n);
        name[n] = '\0';
        t = gumbo_tag_enum(name);
        if (t == GUMBO_TAG_UNKNOWN || t >= GUMBO_TAG_LAST)
            return DC_EINVAL;
        set[t] = 1;
        tags += n;
    }
    memcpy(p->block_tag, set, sizeof set);
    p->blocks_on = memchr(set, 1, sizeof set) != NULL;
    return DC_OK;
}

void parser_free(struct parser **pp)
{
    struct parser *p;

    if (!pp || !*pp)
        return;
    p = *pp;
    parser__arena_free_chunks(&p->arena);
    free(p->stack);
    free(p->refs);
    free(p->region);
    free(p->sbuf);
    free(p->ents);
    free(p->set);
    free(p->links);
    free(p->base);
    free(p->scratch);
    free(p->stripped);
    free(p->blocks);
    free(p);
    *pp = NULL;
}
