/*
 * html-strip.c: the copy of a piece of HTML that gumbo parses instead of
 * the piece (parser__raw_strip, called by html.c; the comment above it,
 * at the end of this file, says what it leaves out and when). Gumbo's
 * time is per token and per byte, so every byte and tag it is not given
 * is time saved; each thing left out is one the walker (html-walk.c)
 * would never read and whose absence makes the tree builder build the
 * same elements in the same places:
 * script and style content, attributes nobody reads, inline elements
 * that hold only text, empty anchors, whitespace and text where nothing
 * counts them. The scan is the cut scan's (html-scan.h): one forward
 * pass over the piece, a few look-aheads bounded per tag.
 */
#include <ctype.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <gumbo.h>

#include "html-scan.h"
#include "parser-internal.h"

/* Visible length of the plain text run s[i..b) as the walker will count
 * it once gumbo decoded it (parser__text_len): code points, a character
 * reference ("&amp;", "&#x41;") as one, whitespace runs inside as one,
 * none at the ends. */
static size_t run_len(const char *s, size_t i, size_t b)
{
    size_t n = 0, pend = 0, k, e;

    for (k = i; k < b; k++) {
        unsigned char c = (unsigned char)s[k];
        if ((c & 0xC0) == 0x80)
            continue;
        if (parser__ws(c)) {
            pend = n > 0;
            continue;
        }
        if (c == '&') { /* a reference: up to its ';' when near */
            for (e = k + 1; e < b && e < k + 34 &&
                            (isalnum((unsigned char)s[e]) || s[e] == '#');
                 e++)
                ;
            if (e < b && s[e] == ';' && e > k + 1)
                k = e;
        }
        n += pend + 1;
        pend = 0;
    }
    return n;
}

/* Bytes s[k..b) are ASCII with no NUL and no '&': gumbo's text of them
 * is these bytes (no reference, no replacement character), so run_len()
 * counts exactly what the walker would. */
static int run_ascii(const char *s, size_t k, size_t b)
{
    for (; k < b; k++)
        if ((unsigned char)s[k] - 1u >= 0x7Fu || s[k] == '&')
            return 0;
    return 1;
}

/* The smallest decimal marker: U+E000, one digit, U+E001. */
#define MARK_DEC_MIN (sizeof(PARSER_MARK_OPEN) - 1 + 1 + \
                      sizeof(PARSER_MARK_CLOSE) - 1)

/* The marker of the run s[k..b), of visible length n, into out when it
 * fits in room bytes (the run's, leading whitespace included); its size,
 * else 0. Up to PARSER_MARK1_MAX one code point, PARSER_MARK1_BASE + n;
 * beyond, the decimal form. A run shorter than MARK_DEC_MIN (which no
 * decimal marker fits, as n <= room) folds only when its count is exact
 * (run_ascii). */
static size_t put_mark(char *out, size_t room, size_t n, const char *s,
                       size_t k, size_t b)
{
    char d[20];
    size_t nd = 0, lo = sizeof(PARSER_MARK_OPEN) - 1,
           lc = sizeof(PARSER_MARK_CLOSE) - 1;

    if (n >= 1 && n <= PARSER_MARK1_MAX) {
        if (room < 4 || (room < MARK_DEC_MIN && !run_ascii(s, k, b)))
            return 0;
        return parser__utf8_put(PARSER_MARK1_BASE + n, out);
    }
    do
        d[nd++] = (char)('0' + n % 10);
    while ((n /= 10) > 0);
    if (lo + nd + lc > room)
        return 0;
    memcpy(out, PARSER_MARK_OPEN, lo);
    for (size_t j = 0; j < nd; j++)
        out[lo + j] = d[nd - 1 - j];
    memcpy(out + lo + nd, PARSER_MARK_CLOSE, lc);
    return lo + nd + lc;
}

/*
 * Copy the data s[i..b) (what lies between two tags) to out; with fold, a
 * run of plain text is folded to one "x" (PARSER_FOLD_X) or to a marker of
 * its visible length (PARSER_FOLD_LEN). Plain text: no '<' in it (no
 * comment, doctype or stray '<', which are copied as they are), and its
 * first byte that is not HTML whitespace is an ordinary character (not
 * '&', which may be a whitespace character reference, nor NUL, which the
 * tree builder drops). Gumbo then sees a non-whitespace character where
 * there was one (what switches insertion modes, closes head, fosters out
 * of tables and clears frameset-ok) and the same formatting elements
 * reconstructed, so the same elements in the same order; only the text
 * nodes' content differs. A marker replaces a run only when it is not
 * longer (out holds as many bytes as the input). With fold, a blank run
 * (whitespace only) becomes its first character: the tree builder treats
 * every whitespace character token alike (inserted, ignored or kept as
 * pending table text, never a mode switch), so one token does what the
 * run did, and the walker counts whitespace-only text as 0. Returns the
 * length written.
 */
static size_t copy_data(const char *s, size_t i, size_t b, char *out, int fold)
{
    size_t k = i, m;

    while (fold && k < b && parser__ws(s[k]))
        k++;
    if (fold && k == b && b > i) { /* blank: one whitespace token */
        out[0] = s[i];
        return 1;
    }
    if (fold && k < b && s[k] != '&' && s[k] != '\0' &&
        !memchr(s + k, '<', b - k)) {
        if (fold == PARSER_FOLD_X) {
            out[0] = 'x';
            return 1;
        }
        if ((m = put_mark(out, b - i, run_len(s, k, b), s, k, b)) > 0)
            return m;
    }
    memcpy(out, s + i, b - i);
    return b - i;
}

static int name_is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(name, want, n) == 0;
}

/* name (n bytes) is one of names[0..count) */
static int name_in(const char *name, size_t n, const char *const *names,
                   size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (name_is(name, n, names[k]))
            return 1;
    return 0;
}

/* Start tags that end foreign content (HTML's "in foreign content" rules:
 * b, big, ..., var; font is taken as one whatever its attributes), and
 * the ones after which this scan cannot tell where an svg element ends:
 * math, the HTML integration points, plaintext and frameset. */
static int svg_breaks(const char *name, size_t n)
{
    static const char *const names[] = {
        "b", "big", "blockquote", "body", "br", "center", "code", "dd",
        "div", "dl", "dt", "em", "embed", "h1", "h2", "h3", "h4", "h5",
        "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta",
        "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong",
        "strike", "sub", "sup", "table", "tt", "u", "ul", "var", "font",
        "math", "foreignobject", "desc", "title", "plaintext", "frameset",
    };

    return name_in(name, n, names, sizeof names / sizeof names[0]);
}

#define LEAF_LOOK 4096 /* bytes a leaf's look-ahead reads at most */
#define LEAF_TAGS 32   /* and tags: each leaf start costs at most this */

/* The start tag at b, ending at e, says nothing of a role (which
 * makes an element a landmark and a block of its own for the walker). */
static int leaf_plain(const char *s, size_t b, size_t e)
{
    const char *p;

    for (p = s + b; p + 4 <= s + e; p++)
        if ((p[0] | 0x20) == 'r' && (p[1] | 0x20) == 'o' &&
            (p[2] | 0x20) == 'l' && (p[3] | 0x20) == 'e')
            return 0;
    return 1;
}

/*
 * Elements that can be left out when they hold only text (text_leaf).
 * First span and the phrase elements that gumbo's tree builder handles
 * only by its "any other start tag" and "any other end tag" rules (in no
 * tag set of its parser.c: neither formatting nor special, no scope, no
 * implied end tag): the walker reads nothing of them but role. Then the
 * formatting elements but a (a link), font (its attributes end foreign
 * content) and nobr (a second one closes the first). html.c reads the
 * list too: none of a group may go when one of it is a block tag.
 */
const int parser__leaf_tags[PARSER_LEAF_NAMES] = {
    GUMBO_TAG_SPAN, GUMBO_TAG_ABBR, GUMBO_TAG_ACRONYM, GUMBO_TAG_BDI,
    GUMBO_TAG_BDO, GUMBO_TAG_CITE, GUMBO_TAG_DATA, GUMBO_TAG_DEL,
    GUMBO_TAG_DFN, GUMBO_TAG_INS, GUMBO_TAG_KBD, GUMBO_TAG_LABEL,
    GUMBO_TAG_MARK, GUMBO_TAG_Q, GUMBO_TAG_SAMP, GUMBO_TAG_SUB,
    GUMBO_TAG_SUP, GUMBO_TAG_TIME, GUMBO_TAG_VAR,
    /* PARSER_LEAF_PHRASE: the formatting elements */
    GUMBO_TAG_B, GUMBO_TAG_BIG, GUMBO_TAG_CODE, GUMBO_TAG_EM, GUMBO_TAG_I,
    GUMBO_TAG_S, GUMBO_TAG_SMALL, GUMBO_TAG_STRIKE, GUMBO_TAG_STRONG,
    GUMBO_TAG_TT, GUMBO_TAG_U,
};
#define LEAF_KEPT 3 /* entries the Noah's Ark clause needs to drop one */
#define SIM_DEPTH 16

/*
 * Which leaves may go, how many start tags of each formatting element
 * went to gumbo so far, and what empty anchors and the runs between tags
 * need (sim_tag, run_droppable): the inline elements open since a
 * formatting element was given while none was (sim), whether the page
 * went beyond what that tracks (sim_off), and what the last tag given
 * was or opened.
 */
struct leaves {
    int spans, fmt, anchors;
    unsigned kept[PARSER_LEAF_NAMES];
    int sim[SIM_DEPTH];
    size_t nsim;
    int sim_off, after_col;
    int in_select, after_edge; /* for blank runs (run_droppable) */
    int text;
};

/* Each GumboTag's index in parser__leaf_tags, or -1: built once. */
static signed char leaf_of[GUMBO_TAG_LAST + 1];
static pthread_once_t leaf_once = PTHREAD_ONCE_INIT;

static void leaf_init(void)
{
    memset(leaf_of, -1, sizeof(leaf_of));
    for (int k = 0; k < PARSER_LEAF_NAMES; k++)
        leaf_of[parser__leaf_tags[k]] = (signed char)k;
}

/* The index of tag t in parser__leaf_tags, or -1. */
static int leaf_kind(int t)
{
    return t >= 0 && t <= GUMBO_TAG_LAST ? leaf_of[t] : -1;
}

/* Elements of tag t in sim (those open since sim started). */
static size_t sim_count(const struct leaves *lv, int t)
{
    size_t same = 0;

    for (size_t j = 0; j < lv->nsim; j++)
        same += lv->sim[j] == t;
    return same;
}

/* An element of kind k may be left out: a phrase element when
 * lv->spans; a formatting element when lv->fmt and the list of active
 * formatting elements holds fewer than LEAF_KEPT entries of its kind with
 * those open around it (open: those of the same leaf), so pushing it
 * drops none (the Noah's Ark clause) and its end tag pops it again. While
 * sim_tag follows the list (not sim_off), its entries are exactly the
 * formatting elements in sim; else each of them came from a start tag
 * given to gumbo (clones replace their entry), so kept[k] bounds them. */
static int leaf_ok(const struct leaves *lv, int k, size_t open)
{
    size_t entries;

    if (k < 0)
        return 0;
    if (k < PARSER_LEAF_PHRASE)
        return lv->spans;
    entries = lv->sim_off ? lv->kept[k] : sim_count(lv, parser__leaf_tags[k]);
    return lv->fmt && entries + open < LEAF_KEPT;
}

/* HTML's formatting elements (the adoption agency's and the list of
 * active formatting elements'): the leaf ones of parser__leaf_tags and
 * the three that never go (a, font, nobr). */
static int formatting(int t)
{
    return leaf_kind(t) >= PARSER_LEAF_PHRASE || t == GUMBO_TAG_A ||
           t == GUMBO_TAG_FONT || t == GUMBO_TAG_NOBR;
}

/*
 * A start tag of t always makes an element where it is, after body's
 * start tag and outside select (where most start tags are ignored): in
 * body, in a table (fostered out of it), in a cell or caption, after the
 * body. Not the tags the tree builder may ignore or merge there (html,
 * head, body, frame, frameset, form, the table parts outside a table,
 * isindex, template), nor svg and the raw text elements, whose content
 * follows the start tag. So text on its two sides is never one text node.
 */
static int edge_start(int t)
{
    switch (t) {
    case GUMBO_TAG_HTML: case GUMBO_TAG_HEAD: case GUMBO_TAG_BODY:
    case GUMBO_TAG_FRAME: case GUMBO_TAG_FRAMESET: case GUMBO_TAG_FORM:
    case GUMBO_TAG_CAPTION: case GUMBO_TAG_COL: case GUMBO_TAG_COLGROUP:
    case GUMBO_TAG_TBODY: case GUMBO_TAG_TD: case GUMBO_TAG_TFOOT:
    case GUMBO_TAG_TH: case GUMBO_TAG_THEAD: case GUMBO_TAG_TR:
    case GUMBO_TAG_ISINDEX: case GUMBO_TAG_TEMPLATE: case GUMBO_TAG_SELECT:
    case GUMBO_TAG_SVG: case GUMBO_TAG_MATH: case GUMBO_TAG_PLAINTEXT:
        return 0;
    default:
        return !raw_text(t);
    }
}

/*
 * Tag t (a start tag unless end) goes to gumbo: follow what empty
 * anchors need to know. The list of active formatting elements holds no
 * entry while sim is empty: a formatting element's entry leaves it when
 * its end tag pops it as the current node, and sim holds every element
 * opened after it (formatting and phrase elements only, each closed by
 * its own end tag in order; br, img and wbr are void). Anything else
 * while sim is not empty (another tag, an end tag out of order, a second
 * a or nobr, a third of one kind: the Noah's Ark clause, too deep) may
 * leave an entry behind, a formatting element to reconstruct at the next
 * start tag: sim_off, for the rest of the page. So does template (its
 * insertion modes). after_col: the tag was col or colgroup, after which
 * an a start tag or a character would end a colgroup; after_edge: it made
 * an element (edge_start); in_select: a select is open.
 */
static void sim_tag(struct leaves *lv, int t, int end)
{
    size_t same;
    int fmt;

    lv->after_edge = !end && edge_start(t);
    if (t == GUMBO_TAG_SELECT)
        lv->in_select = !end;
    lv->after_col = !end && (t == GUMBO_TAG_COL || t == GUMBO_TAG_COLGROUP);
    if (t == GUMBO_TAG_TEMPLATE)
        lv->sim_off = 1;
    if (lv->sim_off)
        return;
    if (end) {
        if (lv->nsim && lv->sim[lv->nsim - 1] == t)
            lv->nsim--;
        else if (lv->nsim)
            lv->sim_off = 1;
        return;
    }
    fmt = formatting(t);
    if (!lv->nsim && !fmt)
        return;
    if (t == GUMBO_TAG_BR || t == GUMBO_TAG_IMG || t == GUMBO_TAG_WBR)
        return;
    if (!fmt && leaf_kind(t) < 0) {
        lv->sim_off = 1;
        return;
    }
    same = sim_count(lv, t);
    if (lv->nsim == SIM_DEPTH || same >= LEAF_KEPT - 1 ||
        (same && (t == GUMBO_TAG_A || t == GUMBO_TAG_NOBR)))
        lv->sim_off = 1;
    else
        lv->sim[lv->nsim++] = t;
}

/*
 * From e (after the start tag at b of a leaf element of kind k): the
 * position of its end tag when it holds only text and leaf elements like
 * it, within LEAF_LOOK bytes and LEAF_TAGS tags: every element of it one
 * that may go (leaf_ok) and plain (leaf_plain), starting with a character
 * that is neither '<' nor NUL or with such an element, none empty, each
 * closed by its own end tag in order; else 0. Leaving such elements out
 * changes no other element: the first character would reconstruct the
 * same formatting elements at the same place as the first start tag, and
 * each end tag pops only its own element. An element with any other tag
 * inside is kept: its end tag may pop a formatting element opened inside
 * it, which the tree builder then clones for the text after it. The
 * bounds keep a page of nested elements linear: every nested start tag
 * looks ahead again.
 */
static size_t text_leaf(const char *s, size_t len, size_t b, size_t e,
                        const struct leaves *lv, int k)
{
    unsigned char open[LEAF_TAGS];
    size_t depth = 1, i = e, tags = 0, n, same, j;
    size_t lim = len - e > LEAF_LOOK ? e + LEAF_LOOK : len;
    int first = 1; /* no character since a start tag */
    int end, selfc, closes;
    const char *p, *want;
    char name[16];

    if (!leaf_plain(s, b, e))
        return 0;
    open[0] = (unsigned char)k;
    while (i < lim && tags++ < LEAF_TAGS) {
        if (s[i] != '<') { /* text up to the next tag */
            if (first && s[i] == '\0')
                return 0;
            first = 0;
            if (!(p = memchr(s + i, '<', lim - i)))
                return 0;
            i = (size_t)(p - s);
        }
        b = i;
        want = gumbo_normalized_tagname(
            (GumboTag)parser__leaf_tags[open[depth - 1]]);
        closes = end_tag_at(s, len, b, want, strlen(want));
        i = tag_close(s, len, b, name, &n, &end, &selfc);
        if (closes) {
            if (first) /* empty */
                return 0;
            if (--depth == 0)
                return b;
        } else { /* a nested start tag: a plain leaf */
            k = leaf_kind(tag_of(name, n));
            for (same = 0, j = 0; j < depth; j++)
                same += open[j] == k;
            if (i >= lim || end || depth == LEAF_TAGS ||
                !leaf_ok(lv, k, same) || !leaf_plain(s, b, i))
                return 0;
            open[depth++] = (unsigned char)k;
            first = 1;
        }
    }
    return 0;
}

#define SVG_DEPTH 32

/*
 * From e (after an svg start tag): the position after the end tag that
 * closes that svg element, when its content is tags that close in order
 * (each end tag names the innermost open one, as an XML writer makes
 * them: an icon of paths, groups and uses), none of them one that ends
 * foreign content or makes it HTML again (svg_breaks), and no CDATA
 * section (text up to "]]>" in foreign content, a comment in HTML); 0
 * when the content is anything else: then nothing after the svg start
 * tag can be told apart exactly.
 */
static size_t svg_end(const char *s, size_t len, size_t e)
{
    char name[16], open[SVG_DEPTH][16];
    size_t lens[SVG_DEPTH], depth = 1, i = e, b, n;
    int end, selfc;

    memcpy(open[0], "svg", 3);
    lens[0] = 3;
    while ((b = next_tag(s, len, i)) < len) {
        i = tag_close(s, len, b, name, &n, &end, &selfc);
        if (i >= len || n > sizeof name)
            return 0;
        if (end) {
            if (n != lens[depth - 1] || memcmp(name, open[depth - 1], n))
                return 0;
            if (--depth == 0)
                return memmem(s + e, b - e, "<![CDATA[", 9) ? 0 : i;
        } else if (svg_breaks(name, n)) {
            return 0;
        } else if (!selfc) {
            if (depth == SVG_DEPTH)
                return 0;
            memcpy(open[depth], name, n);
            lens[depth++] = n;
        }
    }
    return 0;
}

/*
 * Start tags whose attributes all go to gumbo: elements whose attributes
 * the walker reads, a aside (area, link, meta, base, frame, iframe:
 * html-walk.c), the ones whose attributes the tree builder reads or
 * compares (formatting(): the Noah's Ark clause compares them
 * attribute by attribute; not a, which never meets another a after the
 * last marker, as a new a first closes the one open; font, which ends
 * foreign content only with color, face or size; input, whose type=hidden
 * stays in a table; html and body, whose attributes are merged into the
 * first one; isindex, made into a form from its own; annotation-xml's
 * encoding), the raw text elements (raw_text), svg and math. Any other
 * start tag keeps only the attributes the walker reads (copy_read): role,
 * and an a's href and rel.
 */
static int attrs_all(int t)
{
    static const unsigned char all[GUMBO_TAG_LAST + 1] = {
        [GUMBO_TAG_AREA] = 1, [GUMBO_TAG_LINK] = 1, [GUMBO_TAG_META] = 1,
        [GUMBO_TAG_BASE] = 1, [GUMBO_TAG_FRAME] = 1, [GUMBO_TAG_INPUT] = 1,
        [GUMBO_TAG_HTML] = 1, [GUMBO_TAG_BODY] = 1, [GUMBO_TAG_ISINDEX] = 1,
        [GUMBO_TAG_ANNOTATION_XML] = 1, [GUMBO_TAG_PLAINTEXT] = 1,
        [GUMBO_TAG_SVG] = 1, [GUMBO_TAG_MATH] = 1,
    };

    if ((formatting(t) && t != GUMBO_TAG_A) || raw_text(t))
        return 1; /* iframe among the raw text elements */
    return t >= 0 && t <= GUMBO_TAG_LAST && all[t];
}
#define READ_MAX 4 /* attributes copy_read keeps; more: the tag as is */

/* Attribute name s[0..n) is one the walker reads: role on every element,
 * href and rel on a link (a). */
static int attr_read(const char *s, size_t n, int link)
{
    if (n == 4)
        return strncasecmp(s, "role", 4) == 0 ||
               (link && strncasecmp(s, "href", 4) == 0);
    return n == 3 && link && strncasecmp(s, "rel", 3) == 0;
}

/*
 * Copy the start tag s[b..e) (its '>' at e - 1, or a tag that does not
 * end, in an open quote; selfc: it ends in "/>") to out with only the
 * attributes the walker reads (attr_read; link: the tag is an a): its
 * name, then " name=value" for each, in their order, then "/>" or ">".
 * The attributes are split as HTML's tokenizer splits them (tag_close
 * agrees on where the tag ends): a name runs to a space, '/', '=' or '>'
 * (its first character may be '='), a value is quoted or runs to a space
 * or '>'. The tag is copied as it is when it has no other attribute, more
 * than READ_MAX read ones, or would not get shorter. Returns the length
 * written (at most e - b).
 */
static size_t copy_read(const char *s, size_t b, size_t e, int selfc,
                        int link, char *out)
{
    size_t i = b + 1, last = e - 1, nk = 0, o, k, as, ne, name;
    size_t ks[READ_MAX], ke[READ_MAX];
    int dropped = 0;
    const char *p;

    while (i < last && !parser__ws(s[i]) && s[i] != '/')
        i++;
    o = name = i - b; /* "<name" */
    for (;;) {
        while (i < last && (parser__ws(s[i]) || s[i] == '/'))
            i++;
        if (i >= last)
            break;
        as = i++;
        while (i < last && !parser__ws(s[i]) && s[i] != '/' && s[i] != '=')
            i++;
        ne = i;
        while (i < last && parser__ws(s[i]))
            i++;
        if (i < last && s[i] == '=') {
            for (i++; i < last && parser__ws(s[i]); i++)
                ;
            if (i < last && (s[i] == '"' || s[i] == '\'')) {
                if (!(p = memchr(s + i + 1, s[i], last - i - 1)))
                    break; /* the tag does not end: as it is */
                i = (size_t)(p - s) + 1;
            } else {
                while (i < last && !parser__ws(s[i]))
                    i++;
            }
        } else {
            i = ne; /* no value: what follows the spaces is the next one */
        }
        if (!attr_read(s + as, ne - as, link)) {
            dropped = 1;
        } else if (nk < READ_MAX) {
            ks[nk] = as;
            ke[nk++] = i;
            o += 1 + i - as;
        } else {
            dropped = 0; /* too many to keep track of: as it is */
            break;
        }
    }
    o += 1 + (size_t)selfc;
    if (!dropped || i < last || o >= e - b) {
        memcpy(out, s + b, e - b);
        return e - b;
    }
    memcpy(out, s + b, name);
    o = name;
    for (k = 0; k < nk; k++) {
        out[o++] = ' ';
        memcpy(out + o, s + ks[k], ke[k] - ks[k]);
        o += ke[k] - ks[k];
    }
    if (selfc)
        out[o++] = '/';
    out[o++] = '>';
    return o;
}

/*
 * The start tag s[b..e) of an a is an empty anchor that may be left out:
 * written "<a ...></a>" with no attribute the walker reads (href, rel,
 * role: copy_read keeps none, written at out, which has room for it),
 * where no formatting element waits to be reconstructed (sim_tag) and no
 * colgroup is open. Gumbo would make it an element with nothing in it,
 * and push it to and pop it from the list of active formatting elements,
 * which holds no a (nor anything else) then. Returns the position after
 * its end tag, else 0.
 */
static size_t anchor_empty(const char *s, size_t len, size_t b, size_t e,
                           int selfc, const struct leaves *lv, char *out)
{
    char name[16];
    size_t n;
    int end;

    if (!lv->anchors || lv->sim_off || lv->nsim || lv->after_col ||
        s[e - 1] != '>' || !end_tag_at(s, len, e, "a", 1) ||
        copy_read(s, b, e, selfc, 1, out) != 3)
        return 0;
    return tag_close(s, len, e, name, &n, &end, &selfc);
}

/* s[i..b) is not empty and all whitespace. */
static int blank(const char *s, size_t i, size_t b)
{
    if (i >= b)
        return 0;
    for (; i < b; i++)
        if (!parser__ws(s[i]))
            return 0;
    return 1;
}

/*
 * The run s[i..b) between two tags (the one at b: next_edge when it is a
 * start tag that goes to gumbo and edge_start) may be left out: only
 * after body's start tag, and while no formatting element can wait to be
 * reconstructed (any character in body reconstructs them, so an element
 * after it would go into the clones).
 *  - With PARSER_FOLD_X and PARSER_STRIP_TEXT (nobody counts text), any
 *    run, text included, but after col or colgroup (a character ends a
 *    colgroup). A character also ends frameset-ok, but body's start tag
 *    ended it already, and the rest of the tree builder's choices hang
 *    on tags, not text: text in a table is fostered out of it, an
 *    element of its own.
 *  - Else a blank run. Gumbo would make it a text node of whitespace, or
 *    whitespace at the end or start of another one: nothing counted. With
 *    PARSER_FOLD_X any blank run goes. With PARSER_FOLD_LEN only where an
 *    element is made on one side of it (after_edge, next_edge) outside
 *    select: elsewhere the tags around it may be ignored, and the run
 *    would then be counted as the space between two words.
 */
static int run_droppable(const struct leaves *lv, int fold, int body,
                         int next_edge, const char *s, size_t i, size_t b)
{
    if (!body || lv->sim_off || i >= b)
        return 0;
    if (fold == PARSER_FOLD_X && lv->text && !lv->after_col)
        return 1;
    if (!blank(s, i, b))
        return 0;
    if (fold == PARSER_FOLD_X)
        return 1;
    return fold == PARSER_FOLD_LEN && !lv->in_select &&
           (lv->after_edge || next_edge);
}

/* The run s[i..b) into out, unless run_droppable; the length written. */
static size_t give_run(const struct leaves *lv, int fold, int body,
                       int next_edge, const char *s, size_t i, size_t b,
                       char *out)
{
    if (run_droppable(lv, fold, body, next_edge, s, i, b))
        return 0;
    return copy_data(s, i, b, out, fold);
}

/*
 * Where a tag is left out, does the walker need a cut there to count the
 * text on its two sides as two text nodes (parser__text_len)? Only when
 * whitespace meets there: the written text before it (out[0..o)) ends
 * with whitespace, or the input after the tag (s[e..len)) starts with
 * it. Folded runs carry their count in a marker with no whitespace
 * around it, and text that touches without whitespace counts the same
 * joined. A character reference (ending in ';' or starting with '&') may
 * be whitespace too.
 */
static int cut_needed(const char *out, size_t o, const char *s, size_t len,
                      size_t e)
{
    return (o > 0 && (parser__ws(out[o - 1]) || out[o - 1] == ';')) ||
           (e < len && (parser__ws(s[e]) || s[e] == '&'));
}

/*
 * Copy s[0..len) into out (len bytes) without the content of script and
 * style elements: what gumbo would keep as their one text child, which
 * holds no link and no counted text (html-walk.c), but costs gumbo a
 * token per byte. The tags stay, so the tree has the same elements.
 * Exact where the scan above is: an svg element is copied as it is and
 * the scan goes on after it when svg_end() can tell where it ends (inline
 * icons: most pages of some generators start with one); it gives up
 * (copies the rest as is) at any other svg, at math (foreign content:
 * there style is an ordinary element with markup inside) and at frameset
 * (script and style are ignored tags there); a script whose content holds
 * "<!--" (script data's escape states, where "</script>" may not end it)
 * is kept.
 * With fold and PARSER_STRIP_SPANS, spans and the other phrase elements
 * of parser__leaf_tags that hold only text and such elements (text_leaf)
 * after the body's start tag are left out as well: inline elements with
 * nothing the walker reads (no link, no attribute but role; no block
 * unless one is a block tag, when the caller does not ask for this), and
 * neither formatting nor special elements for the tree builder, so every
 * other element keeps its place; their text joins the text around them.
 * Highlighted source code is mostly such spans (more than a third of the
 * tags of a cppreference page). With PARSER_STRIP_FMT (none of them a
 * block tag) the formatting elements of parser__leaf_tags go the same
 * way when leaf_ok() allows (code and em are an eighth of the start tags
 * of a page of the Python docs). With PARSER_STRIP_ANCHORS (and
 * PARSER_STRIP_ATTRS) empty anchors go too where anchor_empty() allows
 * (the targets of a page's own #links: an eighth of the tags of a
 * Doxygen page, a twentieth of a gtk-doc one). With PARSER_FOLD_LEN a
 * cut (PARSER_MARK_CUT) marks a left-out tag where whitespace meets it,
 * so the walker counts the text as it would count the text nodes apart.
 * With PARSER_STRIP_ATTRS, start tags other than those attrs_all() lists
 * keep only the attributes the walker reads (copy_read): gumbo builds the
 * same elements in the same places, and their attributes are a third of
 * a documentation page's bytes (class above all).
 * With fold, text between tags is folded too (copy_data above): most of
 * an ordinary page's bytes, each one a token for gumbo; PARSER_FOLD_X
 * where nobody counts text (blocks off), PARSER_FOLD_LEN where the walker
 * counts it (blocks on). Returns the length written.
 */
size_t parser__raw_strip(const char *s, size_t len, char *out, int fold)
{
    size_t i = 0, o = 0, b, e, r = 0, n, keep, fixes = 0, gone;
    char name[16];
    int end, selfc, raw, fix, svg, body = 0, t;
    int attrs = fold & PARSER_STRIP_ATTRS, k;
    struct leaves lv = {0};
    size_t leaf_end = 0;

    if (fold & PARSER_FOLD_MODE) {
        lv.spans = (fold & PARSER_STRIP_SPANS) != 0;
        lv.fmt = (fold & PARSER_STRIP_FMT) != 0;
        lv.anchors = (fold & PARSER_STRIP_ANCHORS) && attrs;
        lv.text = (fold & PARSER_STRIP_TEXT) != 0;
    }

    fold &= PARSER_FOLD_MODE;
    pthread_once(&leaf_once, leaf_init);

    while ((b = next_tag(s, len, i)) < len) {
        e = tag_close(s, len, b, name, &n, &end, &selfc);
        /* an end tag's name matters only to sim_tag, and to it only
         * while an element it follows is open, or a select */
        t = !end || lv.nsim || lv.in_select ? tag_of(name, n)
                                             : (int)GUMBO_TAG_UNKNOWN;
        svg = !end && t == GUMBO_TAG_SVG && !selfc && e < len;
        if (svg && !(r = svg_end(s, len, e))) /* else copied whole */
            break;
        if (!end && (t == GUMBO_TAG_MATH || t == GUMBO_TAG_FRAMESET ||
                     t == GUMBO_TAG_PLAINTEXT))
            break;
        if (!end && t == GUMBO_TAG_BODY)
            body = 1;
        k = end ? -1 : leaf_kind(t);
        gone = 0;
        if ((leaf_end && b <= leaf_end) ||
            (body && leaf_ok(&lv, k, 0) &&
             (leaf_end = text_leaf(s, len, b, e, &lv, k))))
            gone = e;
        else if (body && !end && t == GUMBO_TAG_A)
            gone = anchor_empty(s, len, b, e, selfc, &lv, out + o);
        if (gone) {
            o += give_run(&lv, fold, body, 0, s, i, b, out + o);
            lv.after_edge = 0;
            if (fold == PARSER_FOLD_LEN && cut_needed(out, o, s, len, gone)) {
                memcpy(out + o, PARSER_MARK_CUT, sizeof(PARSER_MARK_CUT) - 1);
                o += sizeof(PARSER_MARK_CUT) - 1; /* not longer than the tag */
            }
            i = gone; /* left out: the text on both sides is one text node */
            continue;
        }
        if (k >= PARSER_LEAF_PHRASE) /* a formatting start tag for gumbo */
            lv.kept[k]++;
        o += give_run(&lv, fold, body, !end && edge_start(t), s, i, b,
                      out + o);
        sim_tag(&lv, t, end); /* after the run before it */
        raw = !end && e < len && raw_text(t);
        fix = raw && selfc && fixes < PARSER_RAW_FIXES; /* <iframe .../> */
        if (!svg)
            r = raw && !fix ? raw_end(s, len, e, name, n) : e;
        if (r > e && (t == GUMBO_TAG_STYLE ||
                      (t == GUMBO_TAG_SCRIPT &&
                       !memmem(s + e, r - e, "<!--", 4))))
            keep = e - b; /* the content is left out */
        else
            keep = r - b;
        if (attrs && !end && s[e - 1] == '>' && !attrs_all(t)) {
            /* not svg nor raw text (attrs_all), so keep is e - b; a '>'
             * in an open quote copy_read checks */
            o += copy_read(s, b, e, selfc, t == GUMBO_TAG_A, out + o);
        } else {
            memcpy(out + o, s + b, keep);
            o += keep;
        }
        if (fix) { /* taken as empty: its end tag right after it */
            out[o++] = '<';
            out[o++] = '/';
            memcpy(out + o, name, n);
            o += n;
            out[o++] = '>';
            fixes++;
        }
        i = r;
    }
    memcpy(out + o, s + i, len - i);
    return o + len - i;
}
