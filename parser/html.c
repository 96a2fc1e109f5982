/*
 * html.c: link extraction from HTML pages with gumbo.
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
 * elements; nest_guard() turns start tags beyond NEST_LIMIT levels (by a
 * cheap byte scan) into text before parsing. See its comment.
 *
 * Buffers that grew beyond their KEEP limit on a large page are released at
 * the start of the next parse. Nothing here allocates per link.
 *
 * Thread rules: a struct parser is used by one thread at a time.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <gumbo.h>

#include "conf.h"
#include "parser-internal.h"
#include "parser.h"

#define ARENA_ALIGN alignof(max_align_t)
#define ARENA_FIRST ((size_t)256 << 10)      /* first chunk */
#define ARENA_KEEP_MAX ((size_t)8 << 20)     /* largest chunk kept for reuse */
#define ARENA_GROW_MAX ((size_t)4 << 20)     /* doubling stops here */
#define ARENA_SHRINK_RUN 64                  /* see arena_oversized() */
#define BUF_KEEP ((size_t)1 << 20)           /* output buffers kept (bytes) */
#define COUNT_KEEP ((size_t)1 << 16)         /* arrays kept (elements) */
#define NEST_LIMIT 2048                      /* see nest_guard() */

struct arena_chunk {
    struct arena_chunk *next;
    size_t size; /* bytes of data after the header */
    size_t used;
};

struct arena {
    struct arena_chunk *head; /* newest chunk, the one allocated from */
    void *last;               /* most recent block (for the free shortcut) */
    size_t next_size;         /* data size of the first chunk of a page */
    size_t grow;              /* size of the last standard chunk made */
    size_t small_run;         /* pages in a row that used < 1/4 of head */
    size_t small_peak;        /* most any of those pages used */
    size_t bytes;             /* chunk bytes held now */
    size_t peak;              /* most held since the page began */
};

#define CHUNK_HDR                                                          \
    ((sizeof(struct arena_chunk) + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1))

static char *chunk_data(struct arena_chunk *c)
{
    return (char *)c + CHUNK_HDR;
}

/* One link attribute value as gumbo decoded it (NUL-terminated). */
struct raw_ref {
    const char *s;
    size_t len;
    uint32_t block; /* nearest block (0 without blocks) */
};

/* Walk stack entry: a node and the context it inherits. */
#define CTX_LINK 0x1u     /* under an <a> */
#define CTX_NOTEXT 0x2u   /* under script, style, noscript, template */
#define CTX_TEMPLATE 0x4u /* inside template contents */
#define CTX_NAV 0x8u      /* semantic navigation (PARSER_BLOCK_NAV) */
#define CTX_MAIN 0x10u    /* main content (PARSER_BLOCK_MAIN) */
#define CTX_SECTION 0x20u /* header/footer here are not banner/contentinfo */

struct walk_ent {
    GumboNode *n;
    uint32_t block;
    unsigned ctx;
};

/* One unique canonical link while the page is being built. */
struct link_ent {
    size_t off; /* into sbuf */
    size_t len;
    uint64_t hash;
    uint32_t block; /* best occurrence block; UINT32_MAX = none yet */
};

struct parser {
    unsigned flags;
    size_t max_len;
    struct arena arena;
    GumboOptions opts;

    struct walk_ent *stack;
    size_t stack_cap;
    int blocks_on;
    unsigned char block_tag[GUMBO_TAG_LAST + 1];
    struct parser_block *blocks;
    size_t nblocks, blocks_cap;
    struct raw_ref *refs;
    size_t nrefs, refs_cap;
    const char *base_raw;
    size_t base_raw_len;
    const char *canon_raw;   /* first <link rel=canonical href> */
    const char *refresh_raw; /* URL part of the first meta refresh */
    size_t refresh_len;
    unsigned meta_robots;
    size_t nofollow;
    char agent[64];          /* <meta name=agent> counts as robots */
    char canonical[PARSER_URL_MAX];
    char refresh[PARSER_URL_MAX];

    char *sbuf; /* canonical strings, each NUL-terminated */
    size_t slen, scap;
    struct link_ent *ents;
    size_t nents, ents_cap;
    uint32_t *set; /* ents index + 1; 0 = empty */
    size_t set_cap, set_size;
    struct parser_link *links;
    size_t links_cap;
    char *base;
    size_t base_cap;
    char *scratch; /* body copy patched by nest_guard() */
    size_t scratch_cap;
    size_t dom_max;   /* parser_set_limits(); SIZE_MAX: no limit */
    size_t slice_max;

    struct parser_result res;
    char tmp[PARSER_URL_MAX];
};

/* ------------------------------------------------------------- arena */

static struct arena_chunk *arena_grow(struct arena *a, size_t n)
{
    struct arena_chunk *c;
    size_t size;

    /* chunks double within one page, up to ARENA_GROW_MAX; a block larger
     * than that gets a chunk of its own */
    if (!a->grow)
        a->grow = a->next_size;
    else if (a->grow < ARENA_GROW_MAX)
        a->grow *= 2;
    size = n > a->grow ? n : a->grow;
    c = xmalloc(CHUNK_HDR + size);
    a->bytes += CHUNK_HDR + size;
    if (a->bytes > a->peak)
        a->peak = a->bytes;
    c->next = a->head;
    c->size = size;
    c->used = 0;
    a->head = c;
    return c;
}

static void *arena_alloc(void *ud, size_t n)
{
    struct arena *a = ud;
    struct arena_chunk *c = a->head;
    void *p;

    n = (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    if (n == 0)
        n = ARENA_ALIGN;
    if (!c || c->size - c->used < n)
        c = arena_grow(a, n);
    p = chunk_data(c) + c->used;
    c->used += n;
    a->last = p;
    return p;
}

static void arena_free(void *ud, void *p)
{
    struct arena *a = ud;

    if (p && p == a->last) {
        a->head->used = (size_t)((char *)p - chunk_data(a->head));
        a->last = NULL;
    }
}

static void arena_free_chunks(struct arena *a)
{
    struct arena_chunk *c = a->head, *next;

    while (c) {
        next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->last = NULL;
    a->bytes = 0;
}

/*
 * After a big page the kept chunk may be much larger than pages need now:
 * when ARENA_SHRINK_RUN pages in a row used under a quarter of it, give it
 * back (the next chunk is sized from what those pages used).
 */
static int arena_oversized(struct arena *a)
{
    size_t used = a->head->used;

    if (a->head->size <= ARENA_FIRST || used >= a->head->size / 4) {
        a->small_run = 0;
        a->small_peak = 0;
        return 0;
    }
    if (used > a->small_peak)
        a->small_peak = used;
    return ++a->small_run >= ARENA_SHRINK_RUN;
}

/* Drop everything allocated; keep one chunk sized for a typical page. */
static void arena_reset(struct arena *a)
{
    struct arena_chunk *c;
    size_t total = 0;

    a->last = NULL;
    if (!a->head)
        return;
    if (!a->head->next && a->head->size <= ARENA_KEEP_MAX &&
        !arena_oversized(a)) {
        a->head->used = 0;
        return;
    }
    for (c = a->head; c; c = c->next)
        total += c->used;
    if (a->small_run >= ARENA_SHRINK_RUN)
        total = a->small_peak;
    arena_free_chunks(a);
    a->grow = 0;
    a->small_run = 0;
    a->small_peak = 0;
    total += total / 4;
    a->next_size = total < ARENA_FIRST      ? ARENA_FIRST
                   : total > ARENA_KEEP_MAX ? ARENA_KEEP_MAX
                                            : total;
}

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

static const char *attr_value(const GumboElement *e, const char *name)
{
    const GumboVector *v = &e->attributes;
    unsigned i;

    for (i = 0; i < v->length; i++) {
        const GumboAttribute *a = v->data[i];
        if (strcmp(a->name, name) == 0)
            return a->value;
    }
    return NULL;
}

/* ------------------------------------------------------ nesting guard */

/*
 * Tags that do not make the tree deeper: void elements, elements whose end
 * tag is implied by a sibling, and the link tags themselves (which are
 * therefore never neutralized), and the elements whose content is raw text
 * (script, style, ...: turning their start tag into text would expose
 * their content as markup; they cannot nest). Grouped by name length;
 * name is lower case.
 */
static int tag_is_shallow(const char *name, size_t n)
{
    static const char *const by_len[] = {
        NULL,
        "a p",
        "br dd dt hr li rb rp rt td th tr",
        "col img rtc wbr xmp",
        "area base body head html link meta",
        "embed frame input param style tbody tfoot thead title track",
        "iframe keygen option script source",
        "caption",
        "colgroup noembed noframes optgroup textarea",
        "plaintext",
    };
    const char *q, *end;

    if (n >= sizeof by_len / sizeof by_len[0] || !by_len[n])
        return 0;
    q = by_len[n];
    end = q + strlen(q);
    for (; q < end; q += n + 1)
        if (memcmp(q, name, n) == 0)
            return 1;
    return 0;
}

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_alnum(int c)
{
    return is_alpha(c) || (c >= '0' && c <= '9');
}

/*
 * Read the tag name after '<' at *sp (and an optional '/'). Returns its
 * length (0: not a tag), lower-cased into name (truncated to cap).
 */
static size_t tag_name(const char **sp, const char *end, char *name,
                       size_t cap, int *close)
{
    const char *s = *sp;
    size_t n = 0;

    *close = s < end && *s == '/';
    s += *close;
    if (s >= end || !is_alpha((unsigned char)*s))
        return 0;
    for (; s < end && is_alnum((unsigned char)*s); s++, n++)
        if (n < cap)
            name[n] = (char)(*s | 0x20);
    *sp = s;
    return n;
}

/*
 * gumbo needs time quadratic in the depth of the open-element stack
 * (every start tag scans it), so 100k unclosed <div>s take minutes. Before
 * parsing, estimate the depth from start and end tags; each start tag that
 * would pass NEST_LIMIT has its '<' turned into a space in a scratch copy,
 * so it parses as text. Link tags are never touched, and real pages stay
 * far below the limit. Returns body, or the patched copy.
 */
static const char *nest_guard(struct parser *p, const char *body, size_t len)
{
    const char *s = body, *end = body + len, *lt;
    size_t depth = 0, n;
    char name[9];
    int close;

    while ((lt = memchr(s, '<', (size_t)(end - s)))) {
        s = lt + 1;
        n = tag_name(&s, end, name, sizeof name, &close);
        if (n == 0 || (n <= sizeof name && tag_is_shallow(name, n)))
            continue;
        if (close) {
            depth -= depth > 0;
        } else if (depth < NEST_LIMIT) {
            depth++;
        } else {
            if (body != p->scratch) {
                xgrow((void **)&p->scratch, &p->scratch_cap, len, 1);
                memcpy(p->scratch, body, len);
                s = p->scratch + (s - body);
                end = p->scratch + len;
                lt = p->scratch + (lt - body);
                body = p->scratch;
            }
            p->scratch[lt - body] = ' ';
        }
    }
    return body;
}

/* ------------------------------------------------------------- walk */

static void add_ref_n(struct parser *p, const char *v, size_t len,
                      uint32_t block)
{
    if (p->nrefs == p->refs_cap)
        xgrow((void **)&p->refs, &p->refs_cap, p->nrefs + 1, sizeof *p->refs);
    p->refs[p->nrefs].s = v;
    p->refs[p->nrefs].len = len;
    p->refs[p->nrefs].block = block;
    p->nrefs++;
}

static void add_ref(struct parser *p, const char *v, uint32_t block)
{
    if (!v)
        return;
    if (p->nrefs == p->refs_cap)
        xgrow((void **)&p->refs, &p->refs_cap, p->nrefs + 1, sizeof *p->refs);
    p->refs[p->nrefs].s = v;
    p->refs[p->nrefs].len = strlen(v);
    p->refs[p->nrefs].block = block;
    p->nrefs++;
}

/* A new block under `parent`; returns its index. */
static uint32_t block_open(struct parser *p, uint32_t parent, unsigned ctx)
{
    struct parser_block *b;

    if (p->nblocks >= UINT32_MAX)
        return parent; /* cannot happen below gumbo's own limits */
    xgrow((void **)&p->blocks, &p->blocks_cap, p->nblocks + 1,
          sizeof *p->blocks);
    b = &p->blocks[p->nblocks];
    memset(b, 0, sizeof *b);
    b->parent = parent;
    b->flags = ((ctx & CTX_NAV) ? PARSER_BLOCK_NAV : 0) |
               ((ctx & CTX_MAIN) ? PARSER_BLOCK_MAIN : 0);
    return (uint32_t)p->nblocks++;
}

/*
 * Visible length of a text node: UTF-8 code points, leading and trailing
 * whitespace dropped, each inner whitespace run counted as one.
 */
static size_t text_len(const char *s)
{
    size_t n = 0, pend = 0;
    int ws;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xC0) == 0x80)
            continue;
        ws = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
        if (ws) {
            pend = n > 0;
        } else {
            n += pend + 1;
            pend = 0;
        }
    }
    return n;
}

static void add_text(struct parser *p, const struct walk_ent *w,
                     const GumboNode *k)
{
    size_t n;

    if (!p->blocks_on || (w->ctx & CTX_NOTEXT))
        return;
    n = text_len(k->v.text.text);
    p->blocks[w->block].text += n;
    if (w->ctx & CTX_LINK)
        p->blocks[w->block].link_text += n;
}

/* Is `word` one of the space-separated tokens of v (case-insensitive)? */
static int has_token(const char *v, const char *word, const char *seps)
{
    size_t wl = strlen(word), n;

    while (v && *v) {
        v += strspn(v, seps);
        n = strcspn(v, seps);
        if (n == wl && strncasecmp(v, word, n) == 0)
            return 1;
        v += n;
    }
    return 0;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/*
 * The URL of a refresh declaration "N; url=..." (WHATWG HTML, shared
 * declarative refresh steps): after the time, an optional ';' or ',',
 * then an optional "url=", then the URL, quoted or not. 0 when there is
 * none (a refresh of the page itself).
 */
static int refresh_url(const char *v, const char **u, size_t *n)
{
    const char *e;

    while (is_ws(*v))
        v++;
    if (!((*v >= '0' && *v <= '9') || *v == '.'))
        return 0;
    while ((*v >= '0' && *v <= '9') || *v == '.')
        v++;
    while (is_ws(*v))
        v++;
    if (*v == ';' || *v == ',')
        v++;
    else if (*v)
        return 0;
    while (is_ws(*v))
        v++;
    if (strncasecmp(v, "url", 3) == 0) {
        const char *w = v + 3;
        while (is_ws(*w))
            w++;
        if (*w == '=') {
            v = w + 1;
            while (is_ws(*v))
                v++;
        }
    }
    if (*v == '"' || *v == '\'') {
        e = strchr(v + 1, *v);
        v++;
        if (!e)
            e = v + strlen(v);
    } else {
        e = v + strlen(v);
    }
    while (e > v && is_ws(e[-1]))
        e--;
    if (e == v)
        return 0;
    *u = v;
    *n = (size_t)(e - v);
    return 1;
}

static void visit_meta(struct parser *p, const GumboElement *e)
{
    const char *name = attr_value(e, "name");
    const char *content = attr_value(e, "content");
    const char *equiv = attr_value(e, "http-equiv");

    if (!content)
        return;
    if (name && (strcasecmp(name, "robots") == 0 ||
                 (p->agent[0] && strcasecmp(name, p->agent) == 0))) {
        if (has_token(content, "none", " ,\t\n\r"))
            p->meta_robots |= PARSER_META_NOFOLLOW | PARSER_META_NOINDEX;
        if (has_token(content, "nofollow", " ,\t\n\r"))
            p->meta_robots |= PARSER_META_NOFOLLOW;
        if (has_token(content, "noindex", " ,\t\n\r"))
            p->meta_robots |= PARSER_META_NOINDEX;
    }
    if (equiv && !p->refresh_raw && strcasecmp(equiv, "refresh") == 0)
        refresh_url(content, &p->refresh_raw, &p->refresh_len);
}

/* a/area: a link unless rel says nofollow */
static void visit_link(struct parser *p, const GumboElement *e, uint32_t b)
{
    const char *href = attr_value(e, "href");

    if (!href)
        return;
    if (has_token(attr_value(e, "rel"), "nofollow", " \t\n\r\f")) {
        p->nofollow++;
        return;
    }
    add_ref(p, href, b);
}

/*
 * The block context flags e gives its subtree (CTX_NAV, CTX_MAIN,
 * CTX_SECTION added to ctx; see parser_block in parser.h). header and
 * footer follow HTML-AAM: banner / contentinfo only outside sectioning
 * content and the landmarks that scope them.
 */
static unsigned semantic_ctx(const GumboElement *e, unsigned ctx)
{
    static const char seps[] = " \t\n\r\f";
    const char *role = attr_value(e, "role");

    switch (e->tag) {
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_ASIDE:
        ctx |= CTX_NAV | CTX_SECTION;
        break;
    case GUMBO_TAG_MENU:
        ctx |= CTX_NAV;
        break;
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_ARTICLE:
        ctx |= CTX_MAIN | CTX_SECTION;
        break;
    case GUMBO_TAG_SECTION:
        ctx |= CTX_SECTION;
        break;
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
        if (!(ctx & CTX_SECTION))
            ctx |= CTX_NAV;
        break;
    default:
        break;
    }
    if (!role)
        return ctx;
    if (has_token(role, "navigation", seps) || has_token(role, "menu", seps) ||
        has_token(role, "banner", seps) ||
        has_token(role, "contentinfo", seps) ||
        has_token(role, "complementary", seps))
        ctx |= CTX_NAV;
    if (has_token(role, "main", seps) || has_token(role, "article", seps))
        ctx |= CTX_MAIN;
    if (has_token(role, "main", seps) || has_token(role, "article", seps) ||
        has_token(role, "navigation", seps) ||
        has_token(role, "complementary", seps) ||
        has_token(role, "region", seps))
        ctx |= CTX_SECTION;
    return ctx;
}

/*
 * Visit an element: collect its link or base, and turn w (the entry that
 * was popped for it) into the context its children inherit.
 */
static void visit(struct parser *p, const GumboElement *e, struct walk_ent *w)
{
    const char *v;

    if (p->blocks_on) {
        unsigned ctx = semantic_ctx(e, w->ctx);
        int changed = (ctx ^ w->ctx) & (CTX_NAV | CTX_MAIN);
        w->ctx = ctx;
        if (p->block_tag[e->tag] || changed)
            w->block = block_open(p, w->block, ctx);
    }
    switch (e->tag) {
    case GUMBO_TAG_A:
        w->ctx |= CTX_LINK;
        visit_link(p, e, w->block);
        break;
    case GUMBO_TAG_AREA:
        visit_link(p, e, w->block);
        break;
    case GUMBO_TAG_LINK:
        if (!p->canon_raw && !(w->ctx & CTX_TEMPLATE) &&
            has_token(attr_value(e, "rel"), "canonical", " \t\n\r\f"))
            p->canon_raw = attr_value(e, "href");
        break;
    case GUMBO_TAG_META:
        if (!(w->ctx & CTX_TEMPLATE))
            visit_meta(p, e);
        break;
    case GUMBO_TAG_FRAME:
    case GUMBO_TAG_IFRAME:
        add_ref(p, attr_value(e, "src"), w->block);
        break;
    case GUMBO_TAG_BASE:
        if (!p->base_raw && !(w->ctx & CTX_TEMPLATE) &&
            (v = attr_value(e, "href"))) {
            p->base_raw = v;
            p->base_raw_len = strlen(v);
        }
        break;
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
        w->ctx |= CTX_NOTEXT;
        break;
    default:
        break;
    }
}

/*
 * Pre-order walk. Children are pushed last-first so they pop in document
 * order; each inherits its parent's context (template contents, nearest
 * block, link). Text children are counted where they are met: their sums
 * do not depend on order.
 */
static void walk(struct parser *p, GumboNode *root)
{
    size_t sp = 0, need;

    if (!root)
        return;
    if (p->blocks_on)
        block_open(p, 0, 0); /* block 0: the document */
    xgrow((void **)&p->stack, &p->stack_cap, 1, sizeof *p->stack);
    p->stack[sp].n = root;
    p->stack[sp].block = 0;
    p->stack[sp++].ctx = 0;
    while (sp) {
        struct walk_ent w = p->stack[--sp];
        const GumboVector *kids;
        unsigned i;

        visit(p, &w.n->v.element, &w);
        if (w.n->type == GUMBO_NODE_TEMPLATE)
            w.ctx |= CTX_TEMPLATE | CTX_NOTEXT;
        kids = &w.n->v.element.children;
        need = sp + kids->length;
        if (need > p->stack_cap)
            xgrow((void **)&p->stack, &p->stack_cap, need, sizeof *p->stack);
        for (i = kids->length; i-- > 0;) {
            GumboNode *k = kids->data[i];
            if (k->type == GUMBO_NODE_ELEMENT ||
                k->type == GUMBO_NODE_TEMPLATE) {
                p->stack[sp] = w;
                p->stack[sp++].n = k;
            } else if (k->type == GUMBO_NODE_TEXT ||
                       k->type == GUMBO_NODE_CDATA) {
                add_text(p, &w, k);
            }
        }
    }
}

/* Subtree totals: add each block to its parent, children first. */
static void blocks_sum(struct parser *p)
{
    size_t b;

    for (b = p->nblocks; b-- > 1;) {
        struct parser_block *up = &p->blocks[p->blocks[b].parent];
        up->text += p->blocks[b].text;
        up->link_text += p->blocks[b].link_text;
    }
}

/* Navigation outside main content: the last choice for a link. */
static int block_in_nav(const struct parser_block *b)
{
    return (b->flags & (PARSER_BLOCK_NAV | PARSER_BLOCK_MAIN)) ==
           PARSER_BLOCK_NAV;
}

/* Is block a more likely content than block b? Not navigation first, then
 * less link-heavy (no text = ratio 1), then main content. */
static int block_better(const struct parser *p, uint32_t a, uint32_t b)
{
    const struct parser_block *x = &p->blocks[a], *y = &p->blocks[b];
    double ra = x->text ? (double)x->link_text / (double)x->text : 1.0;
    double rb = y->text ? (double)y->link_text / (double)y->text : 1.0;

    if (block_in_nav(x) != block_in_nav(y))
        return !block_in_nav(x);
    if (ra != rb)
        return ra < rb;
    return (x->flags & PARSER_BLOCK_MAIN) && !(y->flags & PARSER_BLOCK_MAIN);
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

static void set_prepare(struct parser *p)
{
    size_t want = 16;

    while (want < p->nrefs * 2)
        want *= 2;
    if (want > p->set_cap) {
        free(p->set);
        p->set = xmalloc(want * sizeof *p->set);
        p->set_cap = want;
    }
    p->set_size = want;
    memset(p->set, 0, want * sizeof *p->set);
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
    if (e->block == UINT32_MAX || block_better(p, b, e->block))
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
        add_ref_n(p, p->refresh_raw, p->refresh_len, 0);
    }
    p->res.nofollow = p->nofollow;
}

/* Resolve the collected raw values into unique links. A slice's links
 * (past the DOM) have no block: they count as content. */
static void resolve_refs(struct parser *p, int slice)
{
    size_t i, n, k;

    for (i = 0; i < p->nrefs; i++) {
        p->res.found++;
        if (parser_url_canon(p->base, p->refs[i].s, p->refs[i].len, p->flags,
                             p->max_len, p->tmp, sizeof p->tmp, &n) != DC_OK) {
            p->res.rejected++;
            continue;
        }
        k = add_link(p, n);
        if (slice)
            p->ents[k].block = PARSER_BLOCK_NONE;
        else if (p->blocks_on)
            note_block(p, k, p->refs[i].block);
    }
}

static void resolve_all(struct parser *p)
{
    directives(p);
    set_prepare(p);
    resolve_refs(p, 0);
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
    if (want > p->set_cap) {
        free(p->set);
        p->set = xmalloc(want * sizeof *p->set);
        p->set_cap = want;
    }
    p->set_size = want;
    memset(p->set, 0, want * sizeof *p->set);
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
    size_t a, b;
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
        arena_reset(&p->arena);
        p->nrefs = 0;
        p->res.slices++;
        s = nest_guard(p, body + a, b - a);
        g = gumbo_parse_with_options(&p->opts, s, b - a);
        if (g)
            walk(p, g->root);
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
    p->opts.allocator = arena_alloc;
    p->opts.deallocator = arena_free;
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
    arena_reset(&p->arena);
    p->arena.peak = p->arena.bytes;
    buf_trim((void **)&p->stack, &p->stack_cap, COUNT_KEEP);
    buf_trim((void **)&p->refs, &p->refs_cap, COUNT_KEEP);
    buf_trim((void **)&p->sbuf, &p->scap, BUF_KEEP);
    buf_trim((void **)&p->ents, &p->ents_cap, COUNT_KEEP);
    buf_trim((void **)&p->set, &p->set_cap, 2 * COUNT_KEEP);
    buf_trim((void **)&p->links, &p->links_cap, COUNT_KEEP);
    buf_trim((void **)&p->scratch, &p->scratch_cap, BUF_KEEP);
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
    size_t a, first = len;

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
    dom = nest_guard(p, body, first);
    g = gumbo_parse_with_options(&p->opts, dom, first);
    if (g)
        walk(p, g->root);
    if (p->blocks_on && !p->nblocks)
        block_open(p, 0, 0);
    blocks_sum(p);
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

size_t parser__arena_bytes(const struct parser *p)
{
    const struct arena_chunk *c;
    size_t n = 0;

    for (c = p ? p->arena.head : NULL; c; c = c->next)
        n += CHUNK_HDR + c->size;
    return n;
}

size_t parser__arena_peak(const struct parser *p)
{
    return p ? p->arena.peak : 0;
}

void parser_free(struct parser **pp)
{
    struct parser *p;

    if (!pp || !*pp)
        return;
    p = *pp;
    arena_free_chunks(&p->arena);
    free(p->stack);
    free(p->refs);
    free(p->sbuf);
    free(p->ents);
    free(p->set);
    free(p->links);
    free(p->base);
    free(p->scratch);
    free(p->blocks);
    free(p);
    *pp = NULL;
}
