/*
 * html-gumbo.c: what gumbo is given (see html.c for the whole design).
 *
 *  - The arena gumbo allocates from (GumboOptions.allocator): a bump
 *    pointer in the newest chunk, frees are no-ops but for the most recent
 *    block, the whole tree dropped by parser__arena_reset(), which also
 *    decides which chunk the next page starts with.
 *  - The nesting guard: start tags nested beyond NEST_LIMIT levels turned
 *    into text before gumbo sees them (its time is quadratic in depth).
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "html-internal.h"
#include "parser-internal.h"

#define CHUNK_HDR                                                          \
    ((sizeof(struct arena_chunk) + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1))

static char *chunk_data(struct arena_chunk *c)
{
    return (char *)c + CHUNK_HDR;
}

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

void *parser__arena_alloc(void *ud, size_t n)
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

void parser__arena_free(void *ud, void *p)
{
    struct arena *a = ud;

    if (p && p == a->last) {
        a->head->used = (size_t)((char *)p - chunk_data(a->head));
        a->last = NULL;
    }
}

void parser__arena_free_chunks(struct arena *a)
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
void parser__arena_reset(struct arena *a)
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
    parser__arena_free_chunks(a);
    a->grow = 0;
    a->small_run = 0;
    a->small_peak = 0;
    total += total / 4;
    a->next_size = total < ARENA_FIRST      ? ARENA_FIRST
                   : total > ARENA_KEEP_MAX ? ARENA_KEEP_MAX
                                            : total;
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
const char *parser__nest_guard(struct parser *p, const char *body, size_t len)
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
