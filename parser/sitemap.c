/*
 * sitemap.c: URLs from a sitemap body (sitemaps.org protocol 0.9 and the
 * feed formats it allows). Formats, told apart by the first bytes:
 *
 *  - gzip (1f 8b): inflated first, capped at the caller's max_bytes (the
 *    part inflated before the cap is still read);
 *  - XML: the root element's local name says what it is: `urlset` (page
 *    URLs: the <loc> of each <url>), `sitemapindex` (more sitemaps: the
 *    <loc> of each <sitemap>), `rss` / `RDF` (the <link> of each <item>,
 *    else its <guid> when that is an http(s) URL) or `feed` (Atom: the
 *    href of each <entry>'s first <link> whose rel is absent or
 *    "alternate"). An entry without <loc> gives its own text instead (seen
 *    in the wild). Namespaces are not checked (lenient, like most
 *    crawlers) and prefixes are ignored (local names are compared); only
 *    direct children of an entry count, so extension elements (image:loc
 *    inside image:image, xhtml:link) are ignored;
 *  - anything else: a text sitemap, one URL per line (lines that do not
 *    start with http:// or https:// are skipped).
 *
 * The XML reader is a small tag scanner, not a validating parser: it knows
 * comments, CDATA, processing instructions and DOCTYPE (skipped whole,
 * internal subset included), decodes the five predefined entities and
 * numeric references, and leaves every other entity as written. No
 * external entity, DTD or file is ever read (no XXE). Every loop advances;
 * work is linear in the input; nothing recurses.
 *
 * Limits: input after max_bytes (after inflating) is not read; at most
 * max_urls URLs (pages and sitemaps together) are returned, `truncated`
 * tells when some were left out; a URL longer than PARSER_URL_MAX is
 * skipped.
 *
 * Thread rules: reentrant; a result belongs to its caller.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#include "conf.h"
#include "parser-internal.h"
#include "parser.h"

#define SM_DEPTH_MAX 64
#define SM_NAME_MAX 32

enum sm_role { ROLE_NONE, ROLE_ENTRY, ROLE_LOC, ROLE_ALT };

struct sm_text {
    char buf[PARSER_URL_MAX];
    size_t len;
    int toolong;
};

struct sm_state {
    struct parser_sitemap *out;
    size_t max_urls;
    int depth;
    unsigned char role[SM_DEPTH_MAX];
    char root[SM_NAME_MAX];
    int entry_depth; /* depth of the open entry element, 0 when none */
    int full;        /* max_urls reached */
    struct sm_text loc, alt, self;
};

/* ------------------------------------------------------------- results */

static void add_url(struct sm_state *st, int sitemap, const char *s, size_t n)
{
    struct parser_sitemap *o = st->out;
    char ***list = sitemap ? &o->sitemaps : &o->urls;
    size_t *cnt = sitemap ? &o->nsitemaps : &o->nurls;
    size_t *cap = sitemap ? &o->capsitemaps : &o->capurls;

    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
                     s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    if (n == 0 || n >= PARSER_URL_MAX)
        return;
    if (o->nurls + o->nsitemaps >= st->max_urls) {
        o->truncated = 1;
        st->full = 1;
        return;
    }
    xgrow((void **)list, cap, *cnt + 1, sizeof **list);
    (*list)[(*cnt)++] = xstrndup(s, n);
}

static int is_http(const char *s, size_t n)
{
    return (n > 7 && !strncmp(s, "http://", 7)) ||
           (n > 8 && !strncmp(s, "https://", 8));
}

/* ---------------------------------------------------------- text sitemap */

static void parse_text(struct sm_state *st, const char *s, const char *end)
{
    while (s < end && !st->full) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        const char *b = s;
        if (!e)
            e = end;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        if (is_http(b, (size_t)(e - b)))
            add_url(st, 0, b, (size_t)(e - b));
        s = e + 1;
    }
}

/* ------------------------------------------------------------------ XML */

static void text_add(struct sm_text *t, const char *s, size_t n)
{
    if (t->len + n >= sizeof t->buf) {
        t->toolong = 1;
        return;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
}

/* Decode the entity at s (s[0] == '&'); returns bytes consumed (0 when it
 * is not one we decode) and writes its text to o (at most 4 bytes). */
static size_t entity(const char *s, const char *end, char *o, size_t *olen)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'},
                 {"quot;", '"'}, {"apos;", '\''}};
    size_t i, k;

    for (i = 0; i < sizeof named / sizeof named[0]; i++) {
        k = strlen(named[i].name);
        if ((size_t)(end - s) > k && !memcmp(s + 1, named[i].name, k)) {
            o[0] = named[i].c;
            *olen = 1;
            return k + 1;
        }
    }
    if (end - s > 3 && s[1] == '#') {
        unsigned long cp = 0;
        int hex = s[2] == 'x' || s[2] == 'X';
        const char *p = s + (hex ? 3 : 2);
        size_t digits = 0;
        for (; p < end && digits < 8; p++, digits++) {
            int c = (unsigned char)*p, v;
            if (c >= '0' && c <= '9')
                v = c - '0';
            else if (hex && c >= 'a' && c <= 'f')
                v = c - 'a' + 10;
            else if (hex && c >= 'A' && c <= 'F')
                v = c - 'A' + 10;
            else
                break;
            cp = cp * (hex ? 16 : 10) + (unsigned long)v;
        }
        if (digits && p < end && *p == ';' && cp > 0 && cp <= 0x10FFFF &&
            (cp < 0xD800 || cp > 0xDFFF)) {
            *olen = parser__utf8_put(cp, o);
            return (size_t)(p + 1 - s);
        }
    }
    return 0;
}

/* Append character data (entities decoded) to t. */
static void text_add_decoded(struct sm_text *t, const char *s, const char *end)
{
    while (s < end) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        char o[4];
        size_t olen = 0, used;
        if (!amp) {
            text_add(t, s, (size_t)(end - s));
            return;
        }
        text_add(t, s, (size_t)(amp - s));
        used = entity(amp, end, o, &olen);
        if (used) {
            text_add(t, o, olen);
            s = amp + used;
        } else {
            text_add(t, "&", 1);
            s = amp + 1;
        }
    }
}

/* Local name of a tag name: the part after the last ':'. */
static void local_name(const char *s, size_t n, char *out)
{
    const char *c = s + n;
    while (c > s && c[-1] != ':')
        c--;
    n = (size_t)(s + n - c);
    if (n >= SM_NAME_MAX)
        n = SM_NAME_MAX - 1;
    memcpy(out, c, n);
    out[n] = '\0';
}

static int name_is(const char *name, const char *want)
{
    size_t i;
    for (i = 0; name[i] && want[i]; i++) {
        int a = (unsigned char)name[i], b = (unsigned char)want[i];
        if (a >= 'A' && a <= 'Z')
            a += 32;
        if (b >= 'A' && b <= 'Z')
            b += 32;
        if (a != b)
            return 0;
    }
    return name[i] == want[i];
}

static int root_is(const struct sm_state *st, const char *a, const char *b)
{
    return name_is(st->root, a) || (b && name_is(st->root, b));
}

/* The value of attribute `want` in attrs[0..n), or NULL; *vlen set. */
static const char *attr(const char *a, size_t n, const char *want,
                        size_t *vlen)
{
    const char *end = a + n;
    size_t wl = strlen(want);

    while (a < end) {
        const char *name, *q;
        size_t nl;
        char quote;
        while (a < end && strchr(" \t\r\n/", *a))
            a++;
        name = a;
        while (a < end && !strchr(" \t\r\n=/>", *a))
            a++;
        nl = (size_t)(a - name);
        while (a < end && strchr(" \t\r\n", *a))
            a++;
        if (a >= end || *a != '=') {
            if (a == name)
                a++;
            continue;
        }
        a++;
        while (a < end && strchr(" \t\r\n", *a))
            a++;
        if (a >= end)
            break;
        quote = *a;
        if (quote != '"' && quote != '\'') {
            q = a;
            while (q < end && !strchr(" \t\r\n>", *q))
                q++;
        } else {
            a++;
            q = memchr(a, quote, (size_t)(end - a));
            if (!q)
                q = end;
        }
        if (nl == wl && !memcmp(name, want, wl)) {
            *vlen = (size_t)(q - a);
            return a;
        }
        a = q < end ? q + 1 : end;
    }
    return NULL;
}

static void entry_begin(struct sm_state *st)
{
    st->entry_depth = st->depth;
    st->loc.len = st->alt.len = st->self.len = 0;
    st->loc.toolong = st->alt.toolong = st->self.toolong = 0;
}

static void entry_end(struct sm_state *st)
{
    int index = root_is(st, "sitemapindex", NULL);
    const struct sm_text *t = NULL;

    st->entry_depth = 0;
    if (st->loc.len && !st->loc.toolong)
        t = &st->loc;
    else if (root_is(st, "rss", "RDF")) {
        if (st->alt.len && !st->alt.toolong && is_http(st->alt.buf, st->alt.len))
            t = &st->alt;
    } else if (st->self.len && !st->self.toolong)
        t = &st->self;
    if (t)
        add_url(st, index, t->buf, t->len);
}

/* A start tag name[0..nl) with attributes; depth already counts it. */
static void on_start(struct sm_state *st, const char *name, size_t nl,
                     const char *attrs, size_t al)
{
    char ln[SM_NAME_MAX];
    int d = st->depth;
    unsigned char role = ROLE_NONE;

    local_name(name, nl, ln);
    if (d == 1) {
        memcpy(st->root, ln, sizeof ln);
    } else if (!st->entry_depth) {
        if ((d == 2 && root_is(st, "urlset", NULL) && name_is(ln, "url")) ||
            (d == 2 && root_is(st, "sitemapindex", NULL) &&
             name_is(ln, "sitemap")) ||
            (root_is(st, "rss", "RDF") && name_is(ln, "item")) ||
            (d == 2 && root_is(st, "feed", NULL) && name_is(ln, "entry"))) {
            entry_begin(st);
            role = ROLE_ENTRY;
        }
    } else if (d == st->entry_depth + 1) {
        /* direct children of the entry (any namespace prefix) */
        int feed = root_is(st, "feed", NULL), rss = root_is(st, "rss", "RDF");
        if (feed && name_is(ln, "link")) {
            size_t rl = 0, hl = 0;
            const char *rel = attr(attrs, al, "rel", &rl);
            const char *href = attr(attrs, al, "href", &hl);
            if (href && !st->loc.len &&
                (!rel || (rl == 9 && !memcmp(rel, "alternate", 9))))
                text_add_decoded(&st->loc, href, href + hl);
        } else if ((!feed && !rss && name_is(ln, "loc")) ||
                   (rss && name_is(ln, "link"))) {
            if (!st->loc.len)
                role = ROLE_LOC;
        } else if (rss && name_is(ln, "guid")) {
            role = ROLE_ALT;
        }
    }
    if (d <= SM_DEPTH_MAX)
        st->role[d - 1] = role;
}

static void on_end(struct sm_state *st)
{
    if (st->depth <= 0)
        return;
    if (st->depth <= SM_DEPTH_MAX && st->role[st->depth - 1] == ROLE_ENTRY &&
        st->entry_depth == st->depth)
        entry_end(st);
    st->depth--;
}

static struct sm_text *text_target(struct sm_state *st)
{
    int d = st->depth;
    if (!st->entry_depth || d < 1 || d > SM_DEPTH_MAX)
        return NULL;
    if (d == st->entry_depth)
        return &st->self;
    if (d == st->entry_depth + 1 && st->role[d - 1] == ROLE_LOC)
        return &st->loc;
    if (d == st->entry_depth + 1 && st->role[d - 1] == ROLE_ALT)
        return &st->alt;
    return NULL;
}

static const char *find(const char *s, const char *end, const char *what)
{
    size_t k = strlen(what);
    while (s + k <= end) {
        const char *p = memchr(s, what[0], (size_t)(end - s));
        if (!p || p + k > end)
            return NULL;
        if (!memcmp(p, what, k))
            return p;
        s = p + 1;
    }
    return NULL;
}

/* End of a tag starting at s ('<'), quotes respected: the '>' or end. */
static const char *tag_end(const char *s, const char *end)
{
    char quote = 0;
    for (; s < end; s++) {
        if (quote) {
            if (*s == quote)
                quote = 0;
        } else if (*s == '"' || *s == '\'') {
            quote = *s;
        } else if (*s == '>') {
            return s;
        }
    }
    return end;
}

/* <!DOCTYPE ...>, internal subset "[...]" included. */
static const char *doctype_end(const char *s, const char *end)
{
    int in_subset = 0;
    for (; s < end; s++) {
        if (*s == '[')
            in_subset = 1;
        else if (*s == ']')
            in_subset = 0;
        else if (*s == '>' && !in_subset)
            return s;
    }
    return end;
}

static void parse_xml(struct sm_state *st, const char *s, const char *end)
{
    while (s < end && !st->full) {
        const char *lt = memchr(s, '<', (size_t)(end - s)), *e;
        struct sm_text *t;
        if (!lt)
            lt = end;
        if (lt > s && (t = text_target(st)))
            text_add_decoded(t, s, lt);
        if (lt == end)
            break;
        s = lt;
        if (end - s >= 4 && !memcmp(s, "<!--", 4)) {
            e = find(s + 4, end, "-->");
            s = e ? e + 3 : end;
        } else if (end - s >= 9 && !memcmp(s, "<![CDATA[", 9)) {
            e = find(s + 9, end, "]]>");
            if (!e)
                e = end;
            if ((t = text_target(st)))
                text_add(t, s + 9, (size_t)(e - s - 9));
            s = e < end ? e + 3 : end;
        } else if (end - s >= 2 && s[1] == '?') {
            e = find(s + 2, end, "?>");
            s = e ? e + 2 : end;
        } else if (end - s >= 2 && s[1] == '!') {
            e = doctype_end(s, end);
            s = e < end ? e + 1 : end;
        } else if (end - s >= 2 && s[1] == '/') {
            e = tag_end(s, end);
            on_end(st);
            s = e < end ? e + 1 : end;
        } else {
            const char *name = s + 1, *ne = name;
            int selfclose;
            e = tag_end(s, end);
            while (ne < e && !strchr(" \t\r\n/>", *ne))
                ne++;
            selfclose = e < end && e > s + 1 && e[-1] == '/';
            if (ne > name) {
                st->depth++;
                on_start(st, name, (size_t)(ne - name), ne,
                         (size_t)(e - ne));
                if (selfclose)
                    on_end(st);
            }
            s = e < end ? e + 1 : end;
        }
    }
}

/* ---------------------------------------------------------------- API */

int parser_sitemap_parse(const char *body, size_t len, size_t max_bytes,
                         size_t max_urls, struct parser_sitemap *out)
{
    struct sm_state *st;
    char *inflated = NULL;
    const char *s, *end;
    size_t n = 0;

    if (!out)
        return DC_EINVAL;
    memset(out, 0, sizeof *out);
    if (!body)
        return DC_EINVAL;
    if (len >= 2 && (unsigned char)body[0] == 0x1f &&
        (unsigned char)body[1] == 0x8b) {
        if (parser_inflate(body, len, 0, max_bytes, &inflated, &n, NULL) != DC_OK)
            return DC_EINVAL;
        body = inflated;
        len = n;
        out->gzip = 1;
    }
    if (len > max_bytes) {
        len = max_bytes;
        out->truncated = 1;
    }
    st = xcalloc(1, sizeof *st);
    st->out = out;
    st->max_urls = max_urls;
    s = body;
    end = body + len;
    if (end - s >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3))
        s += 3;
    while (s < end && strchr(" \t\r\n", *s))
        s++;
    if (s < end && *s == '<') {
        parse_xml(st, s, end);
        out->kind = root_is(st, "urlset", NULL)         ? PARSER_SITEMAP_URLSET
                    : root_is(st, "sitemapindex", NULL) ? PARSER_SITEMAP_INDEX
                    : root_is(st, "rss", "RDF")         ? PARSER_SITEMAP_RSS
                    : root_is(st, "feed", NULL)         ? PARSER_SITEMAP_ATOM
                                                        : PARSER_SITEMAP_UNKNOWN;
    } else {
        parse_text(st, s, end);
        out->kind = PARSER_SITEMAP_TEXT;
    }
    free(st);
    free(inflated);
    return DC_OK;
}

void parser_sitemap_release(struct parser_sitemap *sm)
{
    size_t i;
    if (!sm)
        return;
    for (i = 0; i < sm->nurls; i++)
        free(sm->urls[i]);
    for (i = 0; i < sm->nsitemaps; i++)
        free(sm->sitemaps[i]);
    free(sm->urls);
    free(sm->sitemaps);
    memset(sm, 0, sizeof *sm);
}
