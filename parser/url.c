/*
 * url.c: resolve an href against a base URL and canonicalize it.
 *
 * The parser is the WHATWG URL Standard's basic URL parser
 * (https://url.spec.whatwg.org/#concept-basic-url-parser) cut down to the
 * two special schemes we crawl, http and https; every other scheme (and
 * file:) is DC_EURL. It lives in three files:
 *
 *   url.c         this design note, the fast path, the public calls
 *   url-parse.c   the state machine (scheme, relative, authority, path,
 *                 query states) and parser__url_canon_slow()
 *   url-host.c    host and port states: domains, IPv4, IPv6, IDNA
 *   url-internal.h the writer (struct ubuf) and byte classes they share
 *
 * The serialization is written straight into the caller's buffer through a
 * bounded writer (struct ubuf): on overflow it stops writing and the call
 * ends with DC_ETOOBIG. No heap memory is used; the scratch is a copy of
 * the input when tab/newline/edge whitespace must be removed and the parsed
 * base URL (PARSER_URL_MAX bytes of stack each, the base parsed only for
 * relative refs), plus about 2 KiB for a non-ASCII host.
 *
 * Canonicalization happens while writing, so the output is the WHATWG
 * serialization with these changes:
 *  - no fragment;
 *  - every %XX kept is written with upper-case hex digits, and a '%' that
 *    starts no %XX is written %25 (WHATWG keeps it bare; servers answer
 *    that 400, and Nutch, crawler-commons and wget encode it too);
 *  - a %XX that decodes to an unreserved character (ALPHA DIGIT - . _ ~)
 *    is decoded, in userinfo, path and query alike. The output is a fixed
 *    point of the function: "%2e" is decoded before the dot-segment test,
 *    which is equivalent to WHATWG's test on ".", "%2e", ".%2e", "%2e."
 *    and "%2e%2e", so no new dot segment can appear; and as a '%' is only
 *    ever written as the start of a whole %XX, a decoded hex digit cannot
 *    join the output's tail into a new escape ("%%34%31" becomes
 *    "%2541");
 *  - with PARSER_URL_STRIP_INDEX a last path segment "index.html" is cut,
 *    whether or not a query follows ("/a/index.html?x" -> "/a/?x").
 *
 * Hosts: percent-decoded, ASCII-lowercased, checked for forbidden domain
 * code points, and parsed as IPv4 (WHATWG "ends in a number" rule, hex and
 * octal parts) or IPv6 (compressed serialization). Non-ASCII hosts need
 * IDNA (UTS #46 mapping, then punycode). The mapping table is not carried
 * here: a label is punycode-encoded only when every non-ASCII code point is
 * in a small set that UTS #46 leaves unchanged (idna_simple(): lower-case
 * Latin-1, Greek, Cyrillic, Hiragana, CJK, Hangul); any other non-ASCII
 * host (upper-case or full-width letters, ignored code points such as
 * U+200B, U+3002 as a dot, right-to-left scripts) is rejected with DC_EURL.
 * ASCII "xn--" labels are passed through without punycode validation.
 *
 * Speed: parser_url_canon() first tries a fast path (parser__url_canon_
 * fast, in this file): one pass over a plain absolute http(s) URL, then a copy
 * with the few edits canonicalization makes there (lower-case scheme and
 * host, default port and fragment dropped, "/" for an empty path,
 * index.html). Anything it does not fully understand goes to the full
 * parser (url-parse.c), so the fast path only ever answers with the same
 * bytes (tests/unit/u-url.c checks both paths against each other). The
 * parser itself tests bytes through one compile-time class table (ucls,
 * url-internal.h) and copies runs of bytes that need no change in one
 * memcpy.
 *
 * Limits: an input longer than PARSER_URL_MAX-1 bytes after whitespace
 * removal is DC_ETOOBIG, as is an output that overflows before dot
 * segments or index.html are removed, even if it would fit afterwards.
 * Bytes >= 0x80 are percent-encoded one by one, which equals WHATWG for
 * valid UTF-8 (invalid UTF-8 is not replaced by U+FFFD as a browser would).
 */
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "parser.h"
#include "parser-internal.h"
#include "url-internal.h"

/* ------------------------------------------------------- fast path */

/*
 * The fast path takes an absolute "http://" or "https://" URL (scheme in
 * any case, exactly two slashes) whose bytes need no change but cheap
 * ones: a host of A-Z a-z 0-9 - . _ ~ only (lower-cased), not ending in a
 * number (so not IPv4), no userinfo; a port without leading zeros
 * (dropped when it is the default); a path and query of bytes outside the
 * encode sets, any %XX in upper case and not decoding to an unreserved
 * character, no "." or ".." segment, no backslash; any fragment.
 * Everything else (tabs, spaces and controls anywhere, other bytes in the
 * host, IPv6, relative refs) goes to the full parser, as does an output
 * that does not fit. The canonical form is then the input up to the
 * fragment with scheme and host in lower case, minus a default port, plus
 * "/" when the path is empty, with index.html stripped when asked: the
 * same bytes the full parser writes.
 */

/* A fast-path %XX at s[i] (s[i] == '%'): both digits upper-case hex and
 * the byte not unreserved, so the full parser would keep it as it is. */
static int fast_pct(const char *s, size_t n, size_t i)
{
    int hi, lo;

    if (i + 2 >= n)
        return 0;
    hi = s[i + 1];
    lo = s[i + 2];
    if (!(IS_DIG(hi) || (hi >= 'A' && hi <= 'F')) ||
        !(IS_DIG(lo) || (lo >= 'A' && lo <= 'F')))
        return 0;
    return !is_unreserved(dc_hexval(hi) * 16 + dc_hexval(lo));
}

/* Is s[i] == '.' the start of a "." or ".." segment? i > 0 and s[i-1] is
 * the segment's '/' or not. */
static int fast_dot_segment(const char *s, size_t n, size_t i)
{
    size_t j = i + 1;

    if (s[i - 1] != '/')
        return 0;
    if (j < n && s[j] == '.')
        j++;
    return j == n || s[j] == '/' || s[j] == '?' || s[j] == '#';
}

/* Host at s[b..e): last label (after one trailing dot) must not start
 * with a digit, or the host would be parsed as IPv4. */
static int fast_host_ok(const char *s, size_t b, size_t e)
{
    size_t l;

    if (e > b && s[e - 1] == '.')
        e--;
    if (e == b)
        return 0;
    for (l = e; l > b && s[l - 1] != '.'; l--)
        ;
    return l < e && !IS_DIG(s[l]);
}

/* Port digits at s[b..e): 1 and *keep set when the full parser writes
 * them unchanged (keep = 1) or drops them as the default (keep = 0). */
static int fast_port(const char *s, size_t b, size_t e, int https, int *keep)
{
    unsigned long v = 0;
    size_t i;

    if (e == b || e - b > 5 || s[b] == '0')
        return 0;
    for (i = b; i < e; i++) {
        if (!IS_DIG(s[i]))
            return 0;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > 65535)
        return 0;
    *keep = v != (https ? 443u : 80u);
    return 1;
}

/* Path and query from s[i]: the end of the URL proper (the '#' or n) and
 * the '?' in *q (n when none); 0 when the full parser is needed. */
static int fast_rest(const char *s, size_t n, size_t i, size_t *end,
                     size_t *q)
{
    *q = n;
    for (;;) {
        while (i < n && has(s[i], U_F_PATH))
            i++;
        if (i == n || s[i] == '?' || s[i] == '#')
            break;
        if (s[i] == '%' ? !fast_pct(s, n, i)
                        : s[i] != '.' || fast_dot_segment(s, n, i))
            return 0;
        i += s[i] == '%' ? 3 : 1;
    }
    if (i < n && s[i] == '?') {
        *q = i++;
        for (;;) {
            while (i < n && has(s[i], U_RUN_Q))
                i++;
            if (i == n || s[i] == '#')
                break;
            if (s[i] != '%' || !fast_pct(s, n, i))
                return 0;
            i += 3;
        }
    }
    *end = i;
    return 1;
}

int parser__url_canon_fast(const char *base, const char *ref, size_t reflen,
                           unsigned flags, size_t max_len, char *out,
                           size_t cap, size_t *outlen)
{
    struct ubuf o = { out, 0, 0, 0, 0, 0, 0, SIZE_MAX };
    size_t p, h, he, ae, end, q, len, slash, hk;
    int https, keep = 0;

    (void)base; /* "scheme://" ignores the base */
    if (!ref || !out || !outlen || cap == 0 || reflen > PARSER_URL_MAX ||
        reflen < 8 || (ref[0] | 0x20) != 'h' || (ref[1] | 0x20) != 't' ||
        (ref[2] | 0x20) != 't' || (ref[3] | 0x20) != 'p')
        return -1;
    https = (ref[4] | 0x20) == 's';
    p = https ? 5 : 4;
    if (memcmp(ref + p, "://", 3) != 0)
        return -1;
    h = p + 3;
    for (he = h; he < reflen && has(ref[he], U_F_HOST); he++)
        ;
    if (!fast_host_ok(ref, h, he))
        return -1;
    ae = he;
    if (ae < reflen && ref[ae] == ':') {
        for (ae++; ae < reflen && IS_DIG(ref[ae]); ae++)
            ;
        if (!fast_port(ref, he + 1, ae, https, &keep))
            return -1;
    }
    if (ae < reflen && ref[ae] != '/' && ref[ae] != '?' && ref[ae] != '#')
        return -1;
    if (!fast_rest(ref, reflen, ae, &end, &q))
        return -1;
    hk = keep ? ae : he; /* no port, or the default one: dropped */
    slash = ae == end || ref[ae] != '/';
    len = hk + slash + (end - ae);
    o.lim = max_len < cap - 1 ? max_len : cap - 1;
    if (len > o.lim)
        return -1;
    memcpy(out, https ? "https://" : "http://", h);
    for (size_t i = h; i < hk; i++)
        out[i] = (char)to_lower(ref[i]);
    out[hk] = '/';
    memcpy(out + hk + slash, ref + ae, end - ae);
    o.len = len;
    o.path = hk;
    if (q < reflen)
        o.query = q - ae + hk + slash;
    if (flags & PARSER_URL_STRIP_INDEX)
        parser__url_strip_index(&o);
    out[o.len] = '\0';
    *outlen = o.len;
    return DC_OK;
}
int parser_url_canon(const char *base, const char *ref, size_t reflen,
                     unsigned flags, size_t max_len, char *out, size_t cap,
                     size_t *outlen)
{
    if (parser__url_canon_fast(base, ref, reflen, flags, max_len, out, cap,
                               outlen) == DC_OK)
        return DC_OK;
    return parser__url_canon_slow(base, ref, reflen, flags, max_len, out,
                                  cap, outlen);
}

/* Length of "http://" or "https://" at url's start, or 0. */
static size_t prefix_len(const char *url)
{
    if (strncmp(url, "http://", 7) == 0)
        return 7;
    if (strncmp(url, "https://", 8) == 0)
        return 8;
    return 0;
}

int parser_url_host(const char *url, const char **host, size_t *hostlen)
{
    size_t p = url ? prefix_len(url) : 0, e, h;

    if (p == 0)
        return DC_EURL;
    e = p + strcspn(url + p, "/");
    if (url[e] != '/')
        return DC_EURL;
    for (h = e; h > p && url[h - 1] != '@'; h--)
        ;
    if (h == e)
        return DC_EURL;
    *host = url + h;
    *hostlen = e - h;
    return DC_OK;
}

const char *parser_url_path(const char *url)
{
    size_t p = url ? prefix_len(url) : 0;

    if (p == 0)
        return NULL;
    return strchr(url + p, '/');
}
