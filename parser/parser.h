/*
 * parser.h: from bytes to URLs. Three parts, one module:
 *
 *  - URLs (url.c, url-parse.c, url-host.c): resolve an href against its page's
 *    URL and bring it to the canonical form every other module keys on. Parsing
 *    follows the WHATWG URL standard for the special schemes http and https
 *    (RFC 3986 resolution); only http(s) URLs are accepted. Canonical form:
 *    lower-case scheme and host, default port dropped, fragment dropped, dot
 *    segments removed, percent-encoding normalized (upper-case hex, unreserved
 *    characters decoded, characters outside the WHATWG encode sets encoded),
 *    empty path -> "/". With PARSER_URL_STRIP_INDEX a last path segment of
 *    exactly "index.html" is cut ("/x/index.html" -> "/x/").
 *
 *  - HTML (html.c, html-walk.c, html-gumbo.c): gumbo parses a page; links come
 *    from a[href], area[href], frame[src] and iframe[src], resolved against
 *    <base href> when present. A struct parser holds an arena that gumbo
 *    allocates from and that is reset per page: one struct parser per thread.
 *    Optionally (parser_set_blocks) the same tree walk cuts the page into
 *    blocks and measures their text and link text, for the noise module. A body
 *    longer than parser_set_limits()'s DOM size is parsed in pieces cut before
 *    tags (html-slice.c): the first is the page's DOM, the rest are slices
 *    parsed one at a time for their links only, so a page up to fetch.max_bytes
 *    gives all its links with gumbo's memory bounded.
 *
 *  - robots.txt (robots.c): user-agent group selection by product token and
 *    longest-match Allow/Disallow (RFC 9309 §2.2), `*` and `$` patterns.
 *
 *  - sitemaps (sitemap.c): the URLs of an XML sitemap, sitemap index, RSS
 *    or Atom feed or text sitemap, gzipped or not, with size and count caps.
 *
 *  - scope (scope.c): which links a crawl follows (scope.* settings:
 *    suffixes, repeated path segments, same host / registrable domain via
 *    libpsl, include/exclude regular expressions), and Retry-After.
 *
 * Thread rules: the URL and robots functions are reentrant; a struct parser
 * and a struct parser_robots are not shared between threads while mutated
 * (a parsed struct parser_robots may be read from many threads).
 */
#ifndef DC_PARSER_H
#define DC_PARSER_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- URLs */

#define PARSER_URL_STRIP_INDEX 0x1u /* "/dir/index.html" -> "/dir/" */

/* Largest canonical URL any caller may ask for (a buffer of this size
 * always suffices when max_len <= PARSER_URL_MAX). */
#define PARSER_URL_MAX 8192

/*
 * Resolve `ref` (reflen bytes, as written in a document or a seed file)
 * against `base` (a canonical absolute URL, or NULL when ref must be
 * absolute) and canonicalize it into out (cap bytes, NUL-terminated).
 * Returns DC_OK and sets *outlen; DC_EURL when ref is not an http(s) URL or
 * cannot be parsed (javascript:, mailto:, ftp:, bad host, bad port...);
 * DC_ETOOBIG when the result is longer than max_len or cap-1. out is
 * unspecified on error.
 */
int parser_url_canon(const char *base, const char *ref, size_t reflen,
                     unsigned flags, size_t max_len, char *out, size_t cap,
                     size_t *outlen);

/*
 * For a canonical URL: the authority used as the host key ("host" or
 * "host:port", port only when not the default), and the path+query part
 * ("/..." up to the end). Both point into url. DC_EURL if url is not a
 * canonical http(s) URL.
 */
int parser_url_host(const char *url, const char **host, size_t *hostlen);
const char *parser_url_path(const char *url);

/* ---------------------------------------------------------------- HTML */

struct parser;

/*
 * Blocks (only after parser_set_blocks): the page cut at a set of tags. A
 * link occurrence belongs to its nearest enclosing block; block 0 is the
 * whole document (links outside any block tag). text is the visible text
 * of the block's subtree, nested blocks included, in characters (UTF-8
 * code points) with whitespace collapsed: in each text node, leading and
 * trailing whitespace is dropped and an inner run counts as one; text
 * under script, style, noscript and template is left out. link_text is the
 * part of text inside <a> elements. nlinks counts the link occurrences
 * whose nearest block this is (resolved ones only), nsect those of them
 * whose href names a section of a page ("page.html#part": a path before
 * the fragment; a bare "#part" is not counted). In a block of semantic
 * navigation outside main content, nav_links counts the link occurrences
 * of its whole navigation region (the outermost such block around it,
 * nested blocks included) and nav_mirror those of them whose link the page
 * also has outside such navigation (the block struct parser_link names
 * for it is elsewhere): a menu that repeats the page's own content links;
 * both 0 elsewhere. Blocks are in document order, so parent < own index
 * (block 0 has parent 0).
 *
 * flags: the block's context, inherited down the tree through any element
 * (PARSER_BLOCK_*). Semantic navigation: inside nav, aside, menu, or an
 * element whose role is navigation, banner, contentinfo, complementary or
 * menu; header and footer count only where HTML-AAM maps them to banner /
 * contentinfo, i.e. when not inside article, aside, main, nav or section
 * (or role article, complementary, main, navigation, region). Main
 * content: inside main, article, or role main / article. An element that
 * changes these flags opens a block of its own even when its tag is not in
 * the block set, so all the links of a block share one context.
 */
#define PARSER_BLOCK_NAV 0x1u  /* inside semantic navigation */
#define PARSER_BLOCK_MAIN 0x2u /* inside main content */

struct parser_block {
    size_t text;
    size_t link_text;
    uint32_t parent;
    uint32_t nlinks;
    uint32_t nsect;
    uint32_t nav_links, nav_mirror;
    unsigned flags; /* PARSER_BLOCK_* */
};

/* One extracted link: a canonical URL (NUL-terminated) owned by the parser.
 * With blocks on, block is the block of the link's occurrence most likely
 * to be content: occurrences in navigation (PARSER_BLOCK_NAV without
 * PARSER_BLOCK_MAIN) come last, then the lowest link_text / text ratio (a
 * block without text counts as ratio 1), then main content first, then
 * the first occurrence; PARSER_BLOCK_NONE when the link also occurs past
 * the DOM (in a slice: no block, it counts as content); with blocks off,
 * 0. */
#define PARSER_BLOCK_NONE UINT32_MAX

struct parser_link {
    const char *url;
    size_t len;
    uint32_t block;
};

/* Directives of <meta name="robots" content="..."> (or a meta named for
 * the crawler's own token, parser_set_agent): "none" sets both. */
#define PARSER_META_NOFOLLOW 0x1u
#define PARSER_META_NOINDEX 0x2u

struct parser_result {
    struct parser_link *links; /* unique within the page, document order */
    size_t nlinks;
    size_t found;    /* link attributes seen (a/area href, frame/iframe src) */
    size_t rejected; /* not http(s), unparseable, or too long */
    const char *base; /* effective base URL (the page URL or <base href>) */
    const struct parser_block *blocks; /* NULL unless blocks are on */
    size_t nblocks;
    /* Page directives. Under meta nofollow no link is returned (links 0,
     * the refresh target included); rel="nofollow" links are left out
     * one by one. Both are counted in `nofollow`. */
    unsigned meta_robots;  /* PARSER_META_* */
    size_t nofollow;
    const char *canonical; /* first <link rel=canonical href>, resolved; or
                            * NULL (also when it does not resolve) */
    const char *refresh;   /* target of the first <meta http-equiv=refresh>
                            * with a URL, resolved; or NULL. It is also one
                            * of `links` (unless nofollow). */
    size_t dom_len; /* bytes of the body parsed as the DOM */
    size_t slices;  /* pieces parsed after it (parser_set_limits) */
};

/* New parser: URL flags and max URL length applied to every link. */
struct parser *parser_new(unsigned url_flags, size_t max_url_len);

/*
 * Turn block data on: tags is a space-separated list of HTML tag names
 * (e.g. "td th p div nav"); NULL or "" turns block data off (the default).
 * DC_EINVAL for a name HTML does not know (the set is then unchanged).
 */
int parser_set_blocks(struct parser *p, const char *tags);

/*
 * Bodies longer than dom_bytes: only the first dom_bytes at most (cut
 * before a tag) are parsed into the DOM, which gives blocks, <base>,
 * canonical, refresh and meta robots; the rest is parsed in slices of at
 * most slice_bytes, cut before tags, never inside a comment, script,
 * style or tag. Their links are resolved against the DOM's base, added
 * after the DOM's links (unique, document order) with block
 * PARSER_BLOCK_NONE; rel=nofollow applies, and a meta nofollow anywhere
 * drops all links. gumbo's memory is then bounded by the larger of the
 * two sizes (roughly 25-30 bytes per byte of dense markup). 0 means no
 * limit (the default: the whole body is the DOM); slice_bytes 0 means
 * dom_bytes.
 */
void parser_set_limits(struct parser *p, size_t dom_bytes, size_t slice_bytes);

/*
 * The crawler's product token (e.g. "dcrawl"): a <meta name=TOKEN> is read
 * like <meta name=robots>. At most 63 bytes are kept; NULL or "" clears it.
 */
void parser_set_agent(struct parser *p, const char *token);

/*
 * Parse an HTML body (any bytes; not NUL-terminated) of the page at
 * page_url (canonical) and extract its links. *out points into memory owned
 * by p, valid until the next parser_parse_html() or parser_free(). Returns
 * DC_OK, or DC_EINVAL for a NULL argument. Malformed HTML never fails.
 */
int parser_parse_html(struct parser *p, const char *page_url, const char *body,
                      size_t len, const struct parser_result **out);

/* Free p and NULL the pointer; NULL ok. */
void parser_free(struct parser **p);

/* ------------------------------------------------------------ charset */

/*
 * The character encoding of a page, lower-cased into out (cap >= 16): a
 * byte order mark, else the charset parameter of content_type (may be
 * NULL), else <meta charset> / <meta http-equiv=content-type> within the
 * first 1024 bytes of body. WHATWG aliases iconv spells otherwise are
 * mapped (iso-8859-1, us-ascii -> windows-1252). Returns 1 when found,
 * 0 when not (the caller assumes UTF-8).
 */
int parser_charset_detect(const char *content_type, const char *body,
                          size_t len, char *out, size_t cap);
/* 1 when charset names UTF-8 (or is NULL/empty: nothing to convert). */
int parser_charset_is_utf8(const char *charset);
/*
 * Convert len bytes from charset to UTF-8 (iconv). Invalid bytes and an
 * incomplete last sequence become U+FFFD; output stops at max_out bytes
 * (*truncated = 1). *out is malloc'd, NUL-terminated, *outlen bytes; the
 * caller frees it. DC_OK, or DC_EINVAL when iconv does not know charset
 * (nothing allocated).
 */
int parser_charset_to_utf8(const char *charset, const char *in, size_t len,
                           size_t max_out, char **out, size_t *outlen,
                           int *truncated);

/* ---------------------------------------------------------- robots.txt */

struct parser_robots;

/* Paths given to parser_robots_allowed are paths of canonical URLs
 * (parser_url_canon): escapes of unreserved characters in patterns are
 * decoded so that "Disallow: /%7Ea" matches the canonical "/~a", and
 * paths are normalized the same way. Without it, paths are compared as
 * given and patterns only get upper-case hex and non-ASCII bytes encoded
 * (google/robotstxt's behaviour, which its test vectors expect). */
#define PARSER_ROBOTS_CANON 0x1u

/*
 * Parse a robots.txt body for the crawler whose product token is `agent`
 * (e.g. "dcrawl", used as given: matched exactly, case-insensitively,
 * against the name at the start of user-agent lines; the `*` group applies
 * only when no group names the agent). Only the first 500 KiB are read;
 * lines are cut at 16663 bytes. flags: PARSER_ROBOTS_*. Never fails on
 * malformed input; returns a rule set the caller frees with
 * parser_robots_free().
 */
struct parser_robots *parser_robots_parse(const char *txt, size_t len,
                                          const char *agent, unsigned flags);
/* A rule set that allows (allow != 0) or disallows everything. */
struct parser_robots *parser_robots_all(int allow);
/* Is `path` (path+query of a URL, starting with '/') allowed? 1 or 0. */
int parser_robots_allowed(const struct parser_robots *r, const char *path);
/* Crawl-delay of the selected group in seconds, or -1 when none. */
double parser_robots_crawl_delay(const struct parser_robots *r);
/* The Sitemap URLs of the file in file order, as written (at most 64;
 * every Sitemap line counts, whatever group it is in). *urls points into
 * r; returns the count. */
size_t parser_robots_sitemaps(const struct parser_robots *r,
                              const char *const **urls);
/*
 * The part of `url` robots rules are matched against, as google/robotstxt
 * defines it (for URLs typed by people, not canonical ones): skip a leading
 * "//", then "scheme://" unless a '/', '?' or ';' comes first; take from
 * the first '/', '?' or ';' up to '#'; prepend '/' when missing; "/" when
 * there is no path. Writes at most cap-1 bytes to out (cap >= 2).
 */
void parser_robots_url_path(const char *url, char *out, size_t cap);
void parser_robots_free(struct parser_robots **r);

/* The product token of a User-Agent string: "dcrawl/0.1 (+...)" -> "dcrawl".
 * Writes at most cap-1 bytes to out. */
void parser_agent_token(const char *user_agent, char *out, size_t cap);

/* ------------------------------------------------------------ sitemaps */

enum parser_sitemap_kind {
    PARSER_SITEMAP_UNKNOWN, /* XML with another root: no URLs */
    PARSER_SITEMAP_URLSET,
    PARSER_SITEMAP_INDEX,
    PARSER_SITEMAP_RSS,
    PARSER_SITEMAP_ATOM,
    PARSER_SITEMAP_TEXT
};

/* A parsed sitemap. URLs are as written (entities decoded, trimmed), not
 * canonicalized; the caller resolves and checks them. */
struct parser_sitemap {
    int kind;          /* enum parser_sitemap_kind */
    char **urls;       /* page URLs, document order */
    size_t nurls, capurls;
    char **sitemaps;   /* sitemaps named by a sitemap index */
    size_t nsitemaps, capsitemaps;
    int truncated;     /* max_bytes or max_urls cut something off */
    int gzip;          /* the body was gzipped */
};

/*
 * Parse a sitemap body (any bytes): gzip is inflated first; at most
 * max_bytes (after inflating) are read and at most max_urls URLs kept
 * (pages and sitemaps together). Fills *out (release it with
 * parser_sitemap_release, also after an error). DC_OK, or DC_EINVAL for a
 * NULL argument or a gzip stream that gives no byte. Malformed XML never
 * fails; no external entity or file is ever read.
 */
int parser_sitemap_parse(const char *body, size_t len, size_t max_bytes,
                         size_t max_urls, struct parser_sitemap *out);
void parser_sitemap_release(struct parser_sitemap *sm);

/*
 * Inflate a gzip (several members allowed) or zlib stream, or raw deflate
 * when raw is set, into a new NUL-terminated buffer of at most cap bytes
 * (the caller frees *out). Output past cap is not produced, so a
 * decompression bomb costs at most cap bytes; *cut (may be NULL) is set
 * when the cap stopped decoding. A stream cut short keeps what it gave.
 * DC_OK, or DC_EPARSE when nothing decodes (*out is then NULL).
 */
int parser_inflate(const char *in, size_t len, int raw, size_t cap,
                   char **out, size_t *outlen, int *cut);
/* --------------------------------------------------------------- scope */

/* Why a link is out of scope; PARSER_SCOPE_IN (0) when it is not. */
enum parser_scope_reason {
    PARSER_SCOPE_IN = 0,
    PARSER_SCOPE_SUFFIX,       /* scope.skip_suffixes */
    PARSER_SCOPE_REPEATED,     /* scope.max_repeated_segments */
    PARSER_SCOPE_OFF_HOST,     /* scope.mode = host */
    PARSER_SCOPE_OFF_DOMAIN,   /* scope.mode = domain */
    PARSER_SCOPE_NOT_INCLUDED, /* matches no scope.include expression */
    PARSER_SCOPE_EXCLUDED,     /* matches a scope.exclude expression */
    PARSER_SCOPE_NREASONS
};

enum { PARSER_SCOPE_MODE_ANY, PARSER_SCOPE_MODE_HOST, PARSER_SCOPE_MODE_DOMAIN };

/* The scope.* settings (strings are read, not kept). */
struct parser_scope_conf {
    const char *mode;          /* "any", "host" or "domain" */
    const char *include;       /* space-separated POSIX EREs, "" for none */
    const char *exclude;
    const char *skip_suffixes; /* space-separated, e.g. ".jpg .css" */
    int max_repeated_segments; /* 0 = no limit */
};

struct parser_scope;

/* Build the rules. DC_ECONFIG with a message naming the key in err for an
 * unknown mode or a bad expression (*out is then NULL). Free with
 * parser_scope_free. */
int parser_scope_new(struct parser_scope **out,
                     const struct parser_scope_conf *sc, char *err,
                     size_t errlen);
void parser_scope_free(struct parser_scope **s);

/* Check canonical link `url` found on page `page_url` (canonical; NULL for
 * a seed, which skips the host/domain rule). Returns PARSER_SCOPE_IN or
 * the first rule that rejects it. Reentrant. */
int parser_scope_check(const struct parser_scope *s, const char *page_url,
                       const char *url);
/* A short name of a reason ("suffix", "off host", ...); never NULL. */
const char *parser_scope_reason(int reason);
/* "any"/"host"/"domain" -> PARSER_SCOPE_MODE_*; DC_EINVAL otherwise. */
int parser_scope_mode(const char *name, int *mode);
/* Registrable domain of a canonical URL's host ("a.b.example.co.uk" ->
 * "example.co.uk"); an IP address or a public suffix is returned whole. */
int parser_scope_domain(const struct parser_scope *s, const char *url,
                        char *out, size_t cap);
/* 1 when a segment of path (len bytes, no query) occurs more than max
 * times (max <= 0: never). */
int parser_scope_repeated(const char *path, size_t len, int max);

/*
 * Retry-After of an HTTP response header block (RFC 9110 §10.2.3): delay
 * seconds or an HTTP-date, as milliseconds from now_ms (a date in the past
 * gives 0). DC_ENOTFOUND when absent, DC_EPARSE when malformed.
 */
int parser_retry_after(const char *head, size_t len, int64_t now_ms,
                       int64_t *delay_ms);
/* An HTTP-date (IMF-fixdate, RFC 850 or asctime form) to Unix seconds;
 * DC_EPARSE when malformed. */
int parser_http_date(const char *v, int64_t *secs);

#endif
