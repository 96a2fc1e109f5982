/*
 * html-walk.c: the one walk over gumbo's tree (see html.c for the whole
 * design). An explicit stack, each entry with the context its node
 * inherits (nearest block, inside a link, text excluded, inside a
 * template, semantic flags). It collects the raw link values, the blocks
 * with their text and link-text sums, and the page directives (first base
 * href, meta robots, first canonical, first meta refresh); html.c resolves
 * them after the walk.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "html-internal.h"
#include "parser-internal.h"

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
/* ------------------------------------------------------------- walk */

void parser__add_ref_n(struct parser *p, const char *v, size_t len,
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
    if (v)
        parser__add_ref_n(p, v, strlen(v), block);
}

/* A new block under `parent`; returns its index. */
uint32_t parser__block_open(struct parser *p, uint32_t parent, unsigned ctx)
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

/* The length a marker at s carries (html-strip.c folded a run of text to
 * it); *end past it. 0 when s holds no whole marker of at most 10 digits
 * (a page may hold the same code points: what it claims stays bounded,
 * and only moves its own blocks' sums). */
static size_t mark_len(const char *s, const char **end)
{
    size_t n = 0, lo = sizeof(PARSER_MARK_OPEN) - 1;
    const char *d = s + lo;

    if (strncmp(s, PARSER_MARK_OPEN, lo) != 0 || *d < '0' || *d > '9')
        return 0;
    for (; *d >= '0' && *d <= '9'; d++) {
        if (d >= s + lo + 10)
            return 0;
        n = n * 10 + (size_t)(*d - '0');
    }
    if (strncmp(d, PARSER_MARK_CLOSE, sizeof(PARSER_MARK_CLOSE) - 1) != 0)
        return 0;
    *end = d + sizeof(PARSER_MARK_CLOSE) - 1;
    return n;
}

/* The length a one-code-point marker at s carries (U+F0000 + n, n from 1
 * to PARSER_MARK1_MAX), else 0. */
static size_t mark1_len(const char *s)
{
    uint32_t cp;

    if (parser__utf8_next((const unsigned char *)s, 4, &cp) != 4 ||
        cp < PARSER_MARK1_BASE || cp - PARSER_MARK1_BASE > PARSER_MARK1_MAX)
        return 0;
    return cp - PARSER_MARK1_BASE;
}

size_t parser__text_len(const char *s)
{
    size_t n = 0, pend = 0, m, cut = sizeof(PARSER_MARK_CUT) - 1;
    int fresh = 1; /* no character since the start or a cut */
    const char *e;

    while (*s) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xC0) == 0x80) {
            s++;
            continue;
        }
        if (c == 0xEE && strncmp(s, PARSER_MARK_CUT, cut) == 0) {
            pend = 0; /* whitespace before a cut ends a text node */
            fresh = 1;
            s += cut;
            continue;
        }
        if (c == 0xF3 && (m = mark1_len(s)) > 0) {
            n += pend + m;
            pend = 0;
            fresh = 0;
            s += 4;
            continue;
        }
        if (c == 0xEE && (m = mark_len(s, &e)) > 0) {
            n += pend + m;
            pend = 0;
            fresh = 0;
            s = e;
            continue;
        }
        if (parser__ws(c)) {
            pend = n > 0 && !fresh;
        } else {
            n += pend + 1;
            pend = 0;
            fresh = 0;
        }
        s++;
    }
    return n;
}

static void add_text(struct parser *p, const struct walk_ent *w,
                     const GumboNode *k)
{
    size_t n;

    if (!p->blocks_on || (w->ctx & CTX_NOTEXT))
        return;
    n = parser__text_len(k->v.text.text);
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

/*
 * The URL of a refresh declaration "N; url=..." (WHATWG HTML, shared
 * declarative refresh steps): after the time, an optional ';' or ',',
 * then an optional "url=", then the URL, quoted or not. 0 when there is
 * none (a refresh of the page itself).
 */
static int refresh_url(const char *v, const char **u, size_t *n)
{
    const char *e;

    while (parser__ws(*v))
        v++;
    if (!((*v >= '0' && *v <= '9') || *v == '.'))
        return 0;
    while ((*v >= '0' && *v <= '9') || *v == '.')
        v++;
    while (parser__ws(*v))
        v++;
    if (*v == ';' || *v == ',')
        v++;
    else if (*v)
        return 0;
    while (parser__ws(*v))
        v++;
    if (strncasecmp(v, "url", 3) == 0) {
        const char *w = v + 3;
        while (parser__ws(*w))
            w++;
        if (*w == '=') {
            v = w + 1;
            while (parser__ws(*v))
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
    while (e > v && parser__ws(e[-1]))
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
            w->block = parser__block_open(p, w->block, ctx);
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
void parser__walk(struct parser *p, GumboNode *root)
{
    size_t sp = 0, need;

    if (!root)
        return;
    if (p->blocks_on)
        parser__block_open(p, 0, 0); /* block 0: the document */
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
void parser__blocks_sum(struct parser *p)
{
    size_t b;

    for (b = p->nblocks; b-- > 1;) {
        struct parser_block *up = &p->blocks[p->blocks[b].parent];
        up->text += p->blocks[b].text;
        up->link_text += p->blocks[b].link_text;
    }
}

/* Navigation outside main content: the last choice for a link. */
int parser__block_in_nav(const struct parser_block *b)
{
    return (b->flags & (PARSER_BLOCK_NAV | PARSER_BLOCK_MAIN)) ==
           PARSER_BLOCK_NAV;
}

/* Is block a more likely content than block b? Not navigation first, then
 * less link-heavy (no text = ratio 1), then main content. */
int parser__block_better(const struct parser *p, uint32_t a, uint32_t b)
{
    const struct parser_block *x = &p->blocks[a], *y = &p->blocks[b];
    double ra = x->text ? (double)x->link_text / (double)x->text : 1.0;
    double rb = y->text ? (double)y->link_text / (double)y->text : 1.0;

    if (parser__block_in_nav(x) != parser__block_in_nav(y))
        return !parser__block_in_nav(x);
    if (ra != rb)
        return ra < rb;
    return (x->flags & PARSER_BLOCK_MAIN) && !(y->flags & PARSER_BLOCK_MAIN);
}
