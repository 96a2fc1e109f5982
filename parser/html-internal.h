/*
 * html-internal.h: what the three files of HTML link extraction share
 * (html.c the driver and output, html-walk.c the tree walk, html-gumbo.c
 * gumbo's arena and the nesting guard): struct parser itself and the
 * cross-file calls. See html.c for the design.
 *
 * Only parser/html*.c include this file (it needs gumbo.h, a private
 * dependency of the parser library); other code uses "parser.h" and, for
 * tests, "parser-internal.h".
 */
#ifndef DC_HTML_INTERNAL_H
#define DC_HTML_INTERNAL_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include <gumbo.h>

#include "parser.h"

#define ARENA_ALIGN alignof(max_align_t)
#define ARENA_FIRST ((size_t)256 << 10)      /* first chunk */
#define ARENA_KEEP_MAX ((size_t)8 << 20)     /* largest chunk kept for reuse */
#define ARENA_GROW_MAX ((size_t)4 << 20)     /* doubling stops here */
#define ARENA_SHRINK_RUN 64                  /* html-gumbo.c */
#define BUF_KEEP ((size_t)1 << 20)           /* output buffers kept (bytes) */
#define COUNT_KEEP ((size_t)1 << 16)         /* arrays kept (elements) */
#define NEST_LIMIT 2048                      /* parser__nest_guard() */

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

/* One link attribute value as gumbo decoded it (NUL-terminated). */
struct raw_ref {
    const char *s;
    size_t len;
    uint32_t block; /* nearest block (0 without blocks) */
    uint32_t ent;   /* its link (index into ents), UINT32_MAX: rejected */
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
    uint32_t *region; /* count_mirrors: a block's navigation region */
    size_t region_cap;
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
    char *scratch; /* body copy patched by parser__nest_guard() */
    size_t scratch_cap;
    char *stripped; /* body copy without script/style content */
    size_t stripped_cap;
    size_t dom_max;   /* parser_set_limits(); SIZE_MAX: no limit */
    size_t slice_max;

    struct parser_result res;
    char tmp[PARSER_URL_MAX];
};

/* html-gumbo.c: gumbo's allocator over p->arena (GumboOptions). */
void *parser__arena_alloc(void *ud, size_t n);
void parser__arena_free(void *ud, void *p);
/* html-gumbo.c: drop the page's tree; keep, shrink or free chunks. */
void parser__arena_reset(struct arena *a);
void parser__arena_free_chunks(struct arena *a);
/* html-gumbo.c: body[0..len), or a copy in p->scratch with start tags
 * nested beyond NEST_LIMIT turned into text. */
const char *parser__nest_guard(struct parser *p, const char *body,
                               size_t len);

/* html-walk.c: walk gumbo's tree from root, collecting raw link values,
 * blocks and page directives into p. */
void parser__walk(struct parser *p, GumboNode *root);
/* html-walk.c: one raw link value v[0..len) found in block. */
void parser__add_ref_n(struct parser *p, const char *v, size_t len,
                       uint32_t block);
/* html-walk.c: a new block under parent; returns its index. */
uint32_t parser__block_open(struct parser *p, uint32_t parent, unsigned ctx);
/* html-walk.c: subtree totals of the blocks, after the walk. */
void parser__blocks_sum(struct parser *p);
/* html-walk.c: is block a a more likely content block than b? */
int parser__block_better(const struct parser *p, uint32_t a, uint32_t b);
/* html-walk.c: is the block semantic navigation outside main content? */
int parser__block_in_nav(const struct parser_block *b);

#endif
