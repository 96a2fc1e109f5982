/*
 * parser-internal.h: helpers shared between the parser module's files and
 * its unit tests.
 *
 * Code outside of the parser module should use only the public functions
 * defined in "parser.h", and should *not* include this file.
 */
#ifndef DC_PARSER_INTERNAL_H
#define DC_PARSER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "parser.h"

/* html-gumbo.c: bytes of arena memory p holds right now (chunks, headers
 * included). For tests of the arena's reuse and shrink policy. */
size_t parser__arena_bytes(const struct parser *p);
/* html-gumbo.c: the most arena memory p held during the last parse. */
size_t parser__arena_peak(const struct parser *p);

/* url-parse.c, url.c: the two paths of parser_url_canon(), apart, for tests and
 * benches. _slow is the full WHATWG parser (url-parse.c; same contract as
 * parser_url_canon). _fast handles only plain absolute http(s) URLs (see
 * url.c): DC_OK with the same output the slow path writes, or -1 when the input
 * needs the slow path (out is then unspecified). */
int parser__url_canon_slow(const char *base, const char *ref, size_t reflen,
                           unsigned flags, size_t max_len, char *out,
                           size_t cap, size_t *outlen);
int parser__url_canon_fast(const char *base, const char *ref, size_t reflen,
                           unsigned flags, size_t max_len, char *out,
                           size_t cap, size_t *outlen);

/* html-slice.c: pieces of a big HTML body, cut only before a tag in the
 * tokenizer's data state (see html-slice.c). */
struct parser__cut {
    const char *s;
    size_t len;
    size_t pos; /* where the next piece starts */
};
void parser__cut_init(struct parser__cut *c, const char *s, size_t len);
/* html-strip.c: s[0..len) copied into out (len + PARSER_RAW_ROOM bytes)
 * without the content of script and style elements (their tags stay), and
 * each run of plain text between tags folded: PARSER_FOLD_X to one "x",
 * PARSER_FOLD_LEN to a marker that carries its visible length
 * (parser__text_len reads it back; a run shorter than its marker is kept).
 * A raw text element written self-closing (XHTML's <iframe .../>, <script
 * src=x />) gets its end tag right after it, up to PARSER_RAW_FIXES per
 * call: HTML would read the rest of the page as its text. With
 * PARSER_STRIP_SPANS added to a fold mode, spans and the other phrase
 * elements of parser__leaf_tags that hold nothing but text go too (not
 * when one of them is a block tag), with PARSER_STRIP_FMT the same
 * formatting elements (b, code, em, ...: not when one of them is a block
 * tag), with PARSER_STRIP_ANCHORS empty anchors (<a id=x></a>: no href,
 * rel or role; not when a is a block tag) where no formatting element
 * can be waiting to be reconstructed; with PARSER_FOLD_LEN a
 * PARSER_MARK_CUT takes the place of such a tag where whitespace meets
 * it. Whitespace between two tags goes where nothing counts it, and with
 * PARSER_FOLD_X | PARSER_STRIP_TEXT all text after body's start tag goes
 * (run_droppable in html-strip.c). With PARSER_STRIP_ATTRS, start tags
 * lose the attributes nobody reads (copy_read in html-strip.c). Returns
 * the length. */
#define PARSER_RAW_FIXES 64
#define PARSER_RAW_ROOM (PARSER_RAW_FIXES * sizeof("</noframes>"))
enum { PARSER_FOLD_NONE = 0, PARSER_FOLD_X = 1, PARSER_FOLD_LEN = 2 };
#define PARSER_FOLD_MODE 3     /* the fold mode's bits */
#define PARSER_STRIP_SPANS 4
#define PARSER_STRIP_ATTRS 8
#define PARSER_STRIP_FMT 16
#define PARSER_STRIP_ANCHORS 32
#define PARSER_STRIP_TEXT 64
/* The elements that go when they hold only text: span and the phrase
 * elements (the first PARSER_LEAF_PHRASE, PARSER_STRIP_SPANS), then the
 * formatting elements (PARSER_STRIP_FMT). Values of gumbo's GumboTag. */
#define PARSER_LEAF_PHRASE 19
#define PARSER_LEAF_NAMES 30
extern const int parser__leaf_tags[PARSER_LEAF_NAMES];
/* HTML's ASCII whitespace: space, tab, LF, CR, FF. */
static inline int parser__ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}
size_t parser__raw_strip(const char *s, size_t len, char *out, int fold);
/* utf8.c: code point cp (below 0x110000) as UTF-8 into o (4 bytes of
 * room); its length. */
size_t parser__utf8_put(unsigned long cp, char *o);
/* The code point at s (n bytes readable, or a NUL-terminated string),
 * strictly decoded into *cp; its length, 0 when not valid UTF-8. */
size_t parser__utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
/* The marker of a folded run of visible length n: one code point,
 * U+F0000 + n (Supplementary Private Use Area-A, 4 bytes of UTF-8), for
 * n from 1 to PARSER_MARK1_MAX, so gumbo reads one character token;
 * longer runs: U+E000, n in decimal, U+E001. Gumbo passes private-use
 * code points through. */
#define PARSER_MARK_OPEN "\xEE\x80\x80"
#define PARSER_MARK_CLOSE "\xEE\x80\x81"
#define PARSER_MARK1_BASE 0xF0000u
#define PARSER_MARK1_MAX 65533u
/* Where a tag left out of the copy was (U+E002), when text is counted:
 * the text on its two sides is counted as two text nodes would be. */
#define PARSER_MARK_CUT "\xEE\x80\x82"
/* Visible length of a text node's UTF-8 text: code points, leading and
 * trailing whitespace dropped, each inner whitespace run counted as one;
 * a marker counts as the length it carries; at a cut (PARSER_MARK_CUT)
 * the text before and after is counted apart. */
size_t parser__text_len(const char *s);
/* The next piece [*start, *end), at most max bytes; 0 when the body is
 * done. Bytes between *end and the next piece's start (only after a
 * single token longer than max) hold no tag. */
int parser__cut_next(struct parser__cut *c, size_t max, size_t *start,
                     size_t *end);

#endif
