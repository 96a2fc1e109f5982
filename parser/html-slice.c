/*
 * html-slice.c: where a big HTML body may be cut into pieces that gumbo
 * parses one at a time (html.c parses the first piece into the page's DOM
 * and the rest as slices, so gumbo's memory is bounded by the piece size,
 * not by the body). The copy of a piece gumbo is given, smaller than the
 * piece, is html-strip.c's; both read the bytes as the tokenizer would
 * (html-scan.h).
 *
 * A cut is made only before a '<' that starts a start or end tag ("<a",
 * "</a") where the HTML tokenizer is in its data state: never inside a
 * tag (its attributes and quoted values), a comment, a bogus comment
 * ("<!x>", "<?x>"), or the raw text of script, style, textarea, title,
 * xmp, iframe, noembed and noframes (which end only at their own end tag).
 *
 * One repair, in both the cut scan and the copy gumbo parses: a raw text
 * element whose start tag is written self-closing, as XHTML allows and
 * HTML does not (<iframe src=x />, <script src=x />), is taken as empty.
 * HTML reads everything after it up to its end tag as text, on a page
 * that has none to the end of the body; ImageMagick's documentation, one
 * <iframe .../> in its menu bar, lost every link below it. The copy gets
 * the end tag written after the start tag (parser__raw_strip).
 * A piece therefore begins and ends between tokens, and what gumbo sees in
 * it is what the whole document's tokenizer would see there. Not modelled:
 * <plaintext> (the rest of the body is text: never cut after it), script
 * data's escape states, and foreign content (svg/math), where a tag-like
 * element name is not raw text; these can only move a cut, not lose more
 * than the links near it.
 *
 * The scan is a forward pass with memchr over text, comments and raw text
 * and a small state machine over tags; it keeps no state between pieces
 * other than the next piece's start, which is always a cut point (or the
 * body's start), so it needs no memory.
 *
 * Hostile input: when no cut point lies within `max` bytes of a piece's
 * start (one giant tag, comment or script, or text without any tag), the
 * piece is the first `max` bytes (gumbo sees an unfinished token at its
 * end and drops it) and the next piece starts at the next cut point after
 * them; the bytes in between hold no tag, so no link is lost except one in
 * a single tag longer than `max`. Every call advances, so the number of
 * pieces is at most len / 1 and in practice len / max + a few; each byte
 * is scanned at most twice.
 */
#include <string.h>

#include "html-scan.h"
#include "parser-internal.h"

/*
 * The tag whose '<' is at i (tag_starts() holds): the position after it,
 * and after the content of a raw text element; len when it does not end.
 */
static size_t skip_tag(const char *s, size_t len, size_t i)
{
    char name[16];
    size_t n;
    int end, selfc, t;

    i = tag_close(s, len, i, name, &n, &end, &selfc);
    if (i >= len || end || n > sizeof name)
        return i;
    t = tag_of(name, n);
    if (t == GUMBO_TAG_PLAINTEXT)
        return len;
    if (raw_text(t) && !selfc)
        return raw_end(s, len, i, name, n);
    return i;
}

void parser__cut_init(struct parser__cut *c, const char *s, size_t len)
{
    c->s = s;
    c->len = len;
    c->pos = 0;
}

int parser__cut_next(struct parser__cut *c, size_t max, size_t *start,
                     size_t *end)
{
    const char *s = c->s;
    size_t len = c->len, i = c->pos, limit, best = 0, b;

    if (c->pos >= len)
        return 0;
    if (max == 0)
        max = 1;
    *start = c->pos;
    limit = len - c->pos > max ? c->pos + max : len;
    if (limit == len) {
        *end = c->pos = len;
        return 1;
    }
    if (tag_starts(s, len, i))
        i = skip_tag(s, len, i);
    for (;;) {
        b = next_tag(s, len, i);
        if (b > limit || b >= len)
            break;
        best = b;
        i = skip_tag(s, len, b);
    }
    if (best > *start) { /* the last cut point within max bytes */
        *end = c->pos = best;
    } else { /* none: the first max bytes, then the next cut point on */
        *end = limit;
        c->pos = b;
    }
    return 1;
}
