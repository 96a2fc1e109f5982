/*
 * html-scan.h: the HTML tokenizer's view of a byte string, as the cut scan
 * (html-slice.c) and the copy gumbo parses (html-strip.c) both need it:
 * where the next tag starts (skipping comments and bogus comments), where
 * a tag ends and what its name is (tag_close follows the tokenizer's
 * attribute states, so a '>' in a quoted value does not end it), and
 * where a raw text element's content ends. Static inline: both scans call
 * these once or more per tag, in their inner loops.
 */
#ifndef DC_HTML_SCAN_H
#define DC_HTML_SCAN_H

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include <gumbo.h>

#include "parser-internal.h"

static inline int tag_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* After "<!--" at i: the position after the comment's end (or len). */
static inline size_t comment_end(const char *s, size_t len, size_t i)
{
    const char *p;

    if (i < len && s[i] == '>')
        return i + 1; /* "<!-->" */
    if (i + 1 < len && s[i] == '-' && s[i + 1] == '>')
        return i + 2; /* "<!--->" */
    while (i + 2 <= len && (p = memchr(s + i, '-', len - i))) {
        i = (size_t)(p - s);
        if (i + 2 < len && s[i + 1] == '-' && s[i + 2] == '>')
            return i + 3;
        if (i + 3 < len && s[i + 1] == '-' && s[i + 2] == '!' &&
            s[i + 3] == '>')
            return i + 4;
        i++;
    }
    return len;
}

/* After the '<' at i, is this a start or end tag? */
static inline int tag_starts(const char *s, size_t len, size_t i)
{
    if (i + 1 >= len)
        return 0;
    if (tag_alpha((unsigned char)s[i + 1]))
        return 1;
    return s[i + 1] == '/' && i + 2 < len &&
           tag_alpha((unsigned char)s[i + 2]);
}

/*
 * From i, in the data state: the position of the next '<' that starts a
 * tag (a cut point), skipping comments and bogus comments; len if none.
 */
static inline size_t next_tag(const char *s, size_t len, size_t i)
{
    const char *p;

    while (i < len && (p = memchr(s + i, '<', len - i))) {
        i = (size_t)(p - s);
        if (tag_starts(s, len, i))
            return i;
        if (i + 3 < len && s[i + 1] == '!' && s[i + 2] == '-' &&
            s[i + 3] == '-') {
            i = comment_end(s, len, i + 4);
        } else if (i + 1 < len &&
                   (s[i + 1] == '!' || s[i + 1] == '?' || s[i + 1] == '/')) {
            /* bogus comment to the next '>' ("</>" included) */
            p = memchr(s + i + 2, '>', i + 2 < len ? len - i - 2 : 0);
            i = p ? (size_t)(p - s) + 1 : len;
        } else {
            i++; /* a '<' that is text */
        }
    }
    return len;
}

/* The GumboTag of a tag name tag_close() read (lower-cased, its first 16
 * bytes in name, n its whole length). */
static inline int tag_of(const char *name, size_t n)
{
    return n <= 16 ? (int)gumbo_tagn_enum(name, (unsigned)n)
                   : (int)GUMBO_TAG_UNKNOWN;
}

/* Elements whose content is text up to their own end tag. */
static inline int raw_text(int t)
{
    return t == GUMBO_TAG_SCRIPT || t == GUMBO_TAG_STYLE ||
           t == GUMBO_TAG_TEXTAREA || t == GUMBO_TAG_TITLE ||
           t == GUMBO_TAG_XMP || t == GUMBO_TAG_IFRAME ||
           t == GUMBO_TAG_NOEMBED || t == GUMBO_TAG_NOFRAMES;
}

/* "</name" followed by space, '/' or '>' at i. */
static inline int end_tag_at(const char *s, size_t len, size_t i,
                             const char *name, size_t n)
{
    return i + 2 + n < len && s[i + 1] == '/' &&
           strncasecmp(s + i + 2, name, n) == 0 &&
           (parser__ws(s[i + 2 + n]) || s[i + 2 + n] == '/' ||
            s[i + 2 + n] == '>');
}

/* From i (after a raw text element's start tag): the position of the
 * '<' of its end tag (end_tag_at); len if none. */
static inline size_t raw_end(const char *s, size_t len, size_t i,
                             const char *name, size_t n)
{
    const char *p;

    while (i < len && (p = memchr(s + i, '<', len - i))) {
        i = (size_t)(p - s);
        if (end_tag_at(s, len, i, name, n))
            return i;
        i++;
    }
    return len;
}

enum { T_BEFORE_NAME, T_NAME, T_AFTER_NAME, T_BEFORE_VALUE, T_VALUE };

/*
 * The tag whose '<' is at i (tag_starts() holds): the position after its
 * '>' (len when it does not end); its name lower-cased into name (the
 * first 16 bytes), its length in *n, *end for an end tag.
 */
static inline size_t tag_close(const char *s, size_t len, size_t i,
                               char name[16], size_t *n, int *end,
                               int *selfc)
{
    int st = T_BEFORE_NAME, slash = 0;
    const char *p;

    *selfc = 0;
    *end = s[i + 1] == '/';
    *n = 0;
    i += 1 + (size_t)*end;
    for (; i < len && !parser__ws(s[i]) && s[i] != '/' &&
           s[i] != '>';
         i++, (*n)++)
        if (*n < 16)
            name[*n] = (char)(s[i] | 0x20);
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int was = slash;
        slash = 0;
        if (st == T_VALUE) { /* unquoted value ("/" is part of it) */
            if (parser__ws(c))
                st = T_BEFORE_NAME;
            else if (c == '>')
                break;
        } else if (st == T_BEFORE_VALUE) {
            if (c == '"' || c == '\'') {
                p = memchr(s + i + 1, c, len - i - 1);
                if (!p)
                    return len;
                i = (size_t)(p - s);
                st = T_BEFORE_NAME;
            } else if (c == '>') {
                break;
            } else if (!parser__ws(c)) {
                st = T_VALUE;
            }
        } else if (c == '>') {
            *selfc = was; /* "/>" outside a value: self-closing */
            break;
        } else if (c == '=' && st != T_BEFORE_NAME) {
            st = T_BEFORE_VALUE;
        } else if (parser__ws(c)) {
            st = st == T_NAME ? T_AFTER_NAME : st;
        } else if (c == '/') {
            st = T_BEFORE_NAME;
            slash = 1;
        } else {
            st = T_NAME;
        }
    }
    return i < len ? i + 1 : len;
}

#endif
