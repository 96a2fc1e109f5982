/*
 * robots.c: robots.txt parsing and matching (RFC 9309).
 *
 * Parsing reads the first DC_ROBOTS_MAX_BYTES of the body line by line (CR,
 * LF or CRLF; a leading UTF-8 BOM is skipped, a UTF-16 one (LE or BE) makes
 * the body UTF-16, converted to UTF-8 first; `#` starts a comment; lines
 * are cut at 16663 bytes, as google/robotstxt does). A line
 * is `key: value`; a line without a colon is accepted as `key value` when it
 * holds exactly two words (a common mistake). Keys are case-insensitive and
 * a few frequent misspellings are accepted.
 *
 * Groups: a run of user-agent lines starts a group; the allow and disallow
 * lines after it belong to it, and the next user-agent line after such a
 * line starts a new group. Other records (sitemap, crawl-delay, unknown
 * keys) do not end a run of user-agent lines (RFC 9309 §2.2.4); a
 * crawl-delay applies to the user-agents named so far in the current
 * group. Rules before the first user-agent line are ignored. Every group
 * naming our agent is merged; when none does, every `*` group is merged;
 * when there is none either, all is allowed. A group that matches but has
 * no rules selects "allow all".
 *
 * Agent matching: the user-agent value's name (its leading run of
 * [A-Za-z0-9_-]; "FooBot/2.1 (x)" -> "FooBot") must equal our token (as
 * given, whole), ignoring case. RFC identifiers have no digits; digits are compared rather than cut
 * so that "crawler1" and "crawler2" stay different agents.
 *
 * Patterns and paths are normalized before matching (normalize()): %xx
 * escapes get upper-case hex, literal '$' / '*' in a path (and a '$' inside
 * a pattern) compare as %24 / %2A, and non-ASCII bytes of patterns are
 * percent-encoded (RFC 9309 §2.2.2). With PARSER_ROBOTS_CANON (the
 * crawler: paths of canonical URLs) escapes of unreserved characters are
 * decoded and non-ASCII path bytes encoded as well, the canonical form;
 * without it (`dcrawl robots`: URLs as typed) the path's bytes are kept,
 * as google/robotstxt and its tests expect. Agent names, line
 * length, "Allow: /d/index.html" also allowing "/d/" and the path of a
 * typed URL (parser_robots_url_path) follow google/robotstxt too. A rule's priority is the length of its normalized pattern, `*` and `$`
 * included (a trailing `*` is then dropped for matching); the rules are
 * sorted by priority (Allow first on ties), so the first matching rule
 * decides. `*` matches any run of bytes and a final `$` anchors the end;
 * the matcher is iterative with one backtrack point, O(len(path) *
 * len(pattern)) at worst, never recursive.
 *
 * Thread rules: parsing is reentrant; a parsed rule set is read-only and
 * may be shared by threads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "dc-limits.h"
#include "parser-internal.h"
#include "parser.h"

#define ROBOTS_MAX_SITEMAPS 64
#define ROBOTS_MAX_SITEMAP_LEN 2048
#define ROBOTS_TOKEN_MAX 128
#define ROBOTS_PATH_STACK 1024
#define ROBOTS_LINE_MAX (2083 * 8 - 1) /* longer lines are cut */

enum robots_mode { MODE_RULES, MODE_ALLOW_ALL, MODE_DISALLOW_ALL };
enum { SEL_AGENT = 1, SEL_STAR = 2 };

struct robots_rule {
    size_t off;  /* normalized pattern in pool, without the final '$' */
    size_t len;
    size_t prio; /* normalized length, '*' and '$' included */
    unsigned char allow, anchored, wild, sel;
};

struct parser_robots {
    int mode;
    int canon; /* PARSER_ROBOTS_CANON */
    struct robots_rule *rules;
    size_t nrules, rules_cap;
    char *pool;
    size_t pool_len, pool_cap;
    double crawl_delay;
    char **sitemaps;
    size_t nsitemaps;
};

/* Parse state: which kinds of group the current group is. */
struct robots_state {
    const char *token;
    int in_agents; /* last significant line was a user-agent line */
    unsigned cur;  /* SEL_* bits of the current group */
    unsigned seen; /* SEL_* bits of all groups seen */
    double delay[3];
};

/* ------------------------------------------------------------ helpers */

static int is_ws(int c)
{
    return c == ' ' || c == '\t';
}

static int is_token_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '_';
}

/* Characters compared when matching a user-agent line to our name. */
static int is_name_char(int c)
{
    return is_token_char(c) || (c >= '0' && c <= '9');
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int is_unreserved(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
           c == '~';
}

/* Case-insensitive compare of s[0..n) with the NUL-terminated word. */
static int word_eq(const char *s, size_t n, const char *word)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!word[i] ||
            lower((unsigned char)s[i]) != lower((unsigned char)word[i]))
            return 0;
    return word[n] == '\0';
}

static int word_in(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (word_eq(s, n, *words))
            return 1;
    return 0;
}

enum { N_CANON = 1, N_PATH = 2 };

/*
 * Normalize n bytes of a path (N_PATH) or a pattern into out (room for 3n
 * bytes). Always: %xx escapes get upper-case hex; a literal '$' or '*' is
 * written %24 / %2A (in a path every one; in a pattern a '$' that is not
 * the last byte, since only a final '$' is the end anchor and '*' is
 * always the wildcard), so "Disallow: /%24" matches "/$" and "/a$b"
 * matches "/a$b". Bytes >= 0x80 are percent-encoded in patterns and, with
 * N_CANON, in paths too. With N_CANON also: escapes of unreserved
 * characters are decoded and control characters and space are encoded
 * (the form of a canonical URL's path, parser_url_canon). Returns the
 * output length.
 */
static size_t normalize(const char *in, size_t n, char *out, unsigned how)
{
    static const char hex[] = "0123456789ABCDEF";
    int canon = (how & N_CANON) != 0, path = (how & N_PATH) != 0;
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        int hi, lo, enc;

        if (c == '%' && i + 2 < n &&
            (hi = dc_hexval((unsigned char)in[i + 1])) >= 0 &&
            (lo = dc_hexval((unsigned char)in[i + 2])) >= 0) {
            int v = hi * 16 + lo;
            if (canon && is_unreserved(v)) {
                out[o++] = (char)v;
            } else {
                out[o++] = '%';
                out[o++] = hex[hi];
                out[o++] = hex[lo];
            }
            i += 2;
            continue;
        }
        if (c >= 0x80)
            enc = canon || !path;
        else if (c <= 0x20 || c == 0x7F)
            enc = canon;
        else if (c == '$')
            enc = path || i + 1 < n;
        else
            enc = c == '*' && path;
        if (enc) {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    return o;
}

/* ----------------------------------------------------------- matching */

/* Does the pattern match at the start of s? '*' is a wildcard. */
static int match_wild(const char *pat, size_t m, int anchored, const char *s,
                      size_t n)
{
    size_t p = 0, i = 0, star_p = 0, star_i = 0;
    int have_star = 0;

    for (;;) {
        if (p == m) {
            if (!anchored || i == n)
                return 1;
        } else if (pat[p] == '*') {
            have_star = 1;
            star_p = ++p;
            star_i = i;
            continue;
        } else if (i < n && pat[p] == s[i]) {
            p++;
            i++;
            continue;
        }
        /* mismatch: let the last '*' swallow one more byte */
        if (!have_star || star_i >= n)
            return 0;
        p = star_p;
        i = ++star_i;
    }
}

static int rule_matches(const struct parser_robots *r,
                        const struct robots_rule *rule, const char *s,
                        size_t n)
{
    const char *pat = r->pool + rule->off;

    if (rule->wild)
        return match_wild(pat, rule->len, rule->anchored, s, n);
    if (rule->anchored)
        return n == rule->len && memcmp(s, pat, n) == 0;
    return n >= rule->len && memcmp(s, pat, rule->len) == 0;
}

static int is_robots_txt(const char *s, size_t n)
{
    static const char name[] = "/robots.txt";
    size_t k = sizeof name - 1;

    return n >= k && memcmp(s, name, k) == 0 && (n == k || s[k] == '?');
}

static int allowed_norm(const struct parser_robots *r, const char *s, size_t n)
{
    size_t i;

    if (is_robots_txt(s, n))
        return 1;
    for (i = 0; i < r->nrules; i++)
        if (rule_matches(r, &r->rules[i], s, n))
            return r->rules[i].allow;
    return 1;
}

int parser_robots_allowed(const struct parser_robots *r, const char *path)
{
    char stackbuf[ROBOTS_PATH_STACK], *buf = stackbuf;
    size_t n, len;
    int ok;

    if (!r || r->mode == MODE_ALLOW_ALL)
        return 1;
    if (!path || !*path)
        path = "/";
    len = strlen(path);
    if (r->mode == MODE_DISALLOW_ALL)
        return is_robots_txt(path, len);
    if (len > SIZE_MAX / 4)
        return 0;
    if (3 * len > sizeof stackbuf)
        buf = xmalloc(3 * len);
    n = normalize(path, len, buf, N_PATH | (r->canon ? N_CANON : 0));
    ok = allowed_norm(r, buf, n);
    if (buf != stackbuf)
        free(buf);
    return ok;
}

double parser_robots_crawl_delay(const struct parser_robots *r)
{
    return r ? r->crawl_delay : -1;
}

/* ------------------------------------------------------------ parsing */

static void add_rule(struct parser_robots *r, const char *v, size_t n,
                     int allow, unsigned sel)
{
    struct robots_rule *rule;
    char *pat;
    size_t len, i, o;

    if (n == 0)
        return; /* empty value: no rule */
    xgrow((void **)&r->pool, &r->pool_cap, r->pool_len + 3 * n + 1, 1);
    pat = r->pool + r->pool_len;
    len = normalize(v, n, pat, r->canon ? N_CANON : 0);
    xgrow((void **)&r->rules, &r->rules_cap, r->nrules + 1, sizeof *r->rules);
    rule = &r->rules[r->nrules++];
    memset(rule, 0, sizeof *rule);
    rule->prio = len;
    rule->allow = (unsigned char)allow;
    rule->sel = (unsigned char)sel;
    if (pat[len - 1] == '$') {
        rule->anchored = 1;
        len--;
    }
    /* a trailing '*' adds nothing to a prefix match ("/a*" == "/a",
     * "/a*$" == "/a"); it still counts for priority, as in the RFC */
    if (len > 0 && pat[len - 1] == '*') {
        while (len > 0 && pat[len - 1] == '*')
            len--;
        rule->anchored = 0;
    }
    /* collapse runs of '*' (same language, less backtracking) */
    for (i = o = 0; i < len; i++) {
        if (pat[i] == '*' && o > 0 && pat[o - 1] == '*')
            continue;
        pat[o++] = pat[i];
        if (pat[i] == '*')
            rule->wild = 1;
    }
    rule->off = r->pool_len;
    rule->len = o;
    r->pool_len += o;
}

/* "Allow: /d/index.html" (or .htm) also allows "/d/" exactly: a server
 * answers both with the same page. */
static void add_index_dir(struct parser_robots *r, const char *v, size_t n,
                          unsigned sel)
{
    static const char *const names[] = {"/index.html", "/index.htm"};
    char buf[ROBOTS_LINE_MAX + 2];
    size_t i, k;

    for (i = 0; i < 2; i++) {
        k = strlen(names[i]);
        if (n < k || n > ROBOTS_LINE_MAX || memcmp(v + n - k, names[i], k))
            continue;
        memcpy(buf, v, n - k + 1);
        buf[n - k + 1] = '$';
        add_rule(r, buf, n - k + 2, 1, sel);
        return;
    }
}

static void add_sitemap(struct parser_robots *r, const char *v, size_t n)
{
    if (n == 0 || n > ROBOTS_MAX_SITEMAP_LEN ||
        r->nsitemaps >= ROBOTS_MAX_SITEMAPS)
        return;
    if (!r->sitemaps)
        r->sitemaps = xcalloc(ROBOTS_MAX_SITEMAPS, sizeof *r->sitemaps);
    r->sitemaps[r->nsitemaps++] = xstrndup(v, n);
}

/* A non-negative decimal number ("10", "0.5"), or -1. */
static double parse_delay(const char *v, size_t n)
{
    double d = 0, scale = 1;
    size_t i = 0, digits = 0;

    for (; i < n && v[i] >= '0' && v[i] <= '9' && d < 1e12; i++, digits++)
        d = d * 10 + (v[i] - '0');
    if (i < n && v[i] == '.')
        for (i++; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++)
            if (scale > 1e-9)
                d += (v[i] - '0') * (scale /= 10);
    return digits && i == n ? d : -1;
}

static unsigned agent_sel(const struct robots_state *st, const char *v,
                          size_t n)
{
    size_t k = 0;

    if (n > 0 && v[0] == '*' && (n == 1 || is_ws((unsigned char)v[1])))
        return SEL_STAR;
    while (k < n && is_name_char((unsigned char)v[k]))
        k++;
    if (k == 0 || !st->token[0])
        return 0;
    return strlen(st->token) == k && word_eq(v, k, st->token) ? SEL_AGENT : 0;
}

enum robots_key { KEY_UNKNOWN, KEY_AGENT, KEY_ALLOW, KEY_DISALLOW,
                  KEY_DELAY, KEY_SITEMAP };

static enum robots_key key_kind(const char *k, size_t n)
{
    static const char *const agent[] = {"user-agent", "useragent",
                                        "user agent", NULL};
    static const char *const disallow[] = {"disallow", "dissallow",
                                           "dissalow", "disalow", "diasllow",
                                           "disallaw", "desallow", NULL};
    static const char *const delay[] = {"crawl-delay", "crawldelay", NULL};
    static const char *const sitemap[] = {"sitemap", "site-map", NULL};

    if (word_in(k, n, agent))
        return KEY_AGENT;
    if (word_eq(k, n, "allow"))
        return KEY_ALLOW;
    if (word_in(k, n, disallow))
        return KEY_DISALLOW;
    if (word_in(k, n, delay))
        return KEY_DELAY;
    if (word_in(k, n, sitemap))
        return KEY_SITEMAP;
    return KEY_UNKNOWN;
}

static void handle_line(struct parser_robots *r, struct robots_state *st,
                        enum robots_key key, const char *v, size_t n)
{
    double d;

    switch (key) {
    case KEY_AGENT:
        if (!st->in_agents)
            st->cur = 0;
        st->in_agents = 1;
        st->cur |= agent_sel(st, v, n);
        st->seen |= st->cur;
        break;
    case KEY_ALLOW:
    case KEY_DISALLOW:
        st->in_agents = 0;
        if (st->cur)
            add_rule(r, v, n, key == KEY_ALLOW, st->cur);
        if (st->cur && key == KEY_ALLOW)
            add_index_dir(r, v, n, st->cur);
        break;
    case KEY_DELAY:
        /* an extension record: it does not end the run of user-agents */
        d = parse_delay(v, n);
        if (d >= 0 && (st->cur & SEL_AGENT) && st->delay[SEL_AGENT] < 0)
            st->delay[SEL_AGENT] = d;
        if (d >= 0 && (st->cur & SEL_STAR) && st->delay[SEL_STAR] < 0)
            st->delay[SEL_STAR] = d;
        break;
    case KEY_SITEMAP:
        add_sitemap(r, v, n);
        break;
    default:
        break;
    }
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && is_ws((unsigned char)**s))
        (*s)++;
    while (*e > *s && is_ws((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Split one line (no line end) into key and value and act on it. */
static void parse_line(struct parser_robots *r, struct robots_state *st,
                       const char *s, const char *e)
{
    const char *hash = memchr(s, '#', (size_t)(e - s));
    const char *sep, *ke, *v;

    if (hash)
        e = hash;
    trim(&s, &e);
    if (s == e)
        return;
    sep = memchr(s, ':', (size_t)(e - s));
    if (sep) {
        ke = sep;
        v = sep + 1;
    } else {
        /* "key value": exactly two words */
        for (ke = s; ke < e && !is_ws((unsigned char)*ke); ke++)
            ;
        for (v = ke; v < e && is_ws((unsigned char)*v); v++)
            ;
        if (ke == e)
            return;
        for (sep = v; sep < e; sep++)
            if (is_ws((unsigned char)*sep))
                return;
    }
    trim(&s, &ke);
    trim(&v, &e);
    handle_line(r, st, key_kind(s, (size_t)(ke - s)), v, (size_t)(e - v));
}

static int rule_cmp(const void *a, const void *b)
{
    const struct robots_rule *x = a, *y = b;

    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if (x->allow != y->allow)
        return x->allow ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Keep the rules of the selected groups, most specific first. */
static void select_rules(struct parser_robots *r, const struct robots_state *st)
{
    unsigned want = (st->seen & SEL_AGENT) ? SEL_AGENT : SEL_STAR;
    size_t i, o = 0;

    for (i = 0; i < r->nrules; i++)
        if (r->rules[i].sel & want)
            r->rules[o++] = r->rules[i];
    r->nrules = o;
    if (!st->seen)
        r->nrules = 0;
    r->crawl_delay = st->delay[want];
    if (r->nrules > 1)
        qsort(r->rules, r->nrules, sizeof *r->rules, rule_cmp);
}

/* Our product token as given; one too long to hold never matches. */
static void agent_name(const char *agent, char *out, size_t cap)
{
    size_t n = agent ? strlen(agent) : 0;

    if (n >= cap)
        n = 0;
    if (n)
        memcpy(out, agent, n);
    out[n] = '\0';
}

/* A UTF-16 body (after its BOM) as UTF-8, in a new buffer; *len updated.
 * Unpaired surrogates become U+FFFD. */
static char *utf16_to_utf8(const unsigned char *s, size_t *len, int be)
{
    size_t n = *len / 2, i, o = 0;
    char *out = xmalloc(n * 3 + 1);

    for (i = 0; i < n; i++) {
        unsigned cu = be ? (unsigned)s[2 * i] << 8 | s[2 * i + 1]
                         : (unsigned)s[2 * i + 1] << 8 | s[2 * i];
        unsigned long cp = cu;
        if (cu >= 0xD800 && cu < 0xDC00 && i + 1 < n) {
            unsigned lo = be ? (unsigned)s[2 * i + 2] << 8 | s[2 * i + 3]
                             : (unsigned)s[2 * i + 3] << 8 | s[2 * i + 2];
            if (lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((unsigned long)(cu - 0xD800) << 10) + (lo - 0xDC00);
                i++;
            }
        }
        if (cp >= 0xD800 && cp < 0xE000)
            cp = 0xFFFD;
        o += parser__utf8_put(cp, out + o); /* a pair: 4 bytes, from 2 units */
    }
    out[o] = '\0';
    *len = o;
    return out;
}

struct parser_robots *parser_robots_parse(const char *txt, size_t len,
                                          const char *agent, unsigned flags)
{
    char *wide = NULL;
    struct parser_robots *r = xcalloc(1, sizeof *r);
    struct robots_state st = {0};
    char token[ROBOTS_TOKEN_MAX];
    const char *s, *end, *e;

    r->mode = MODE_RULES;
    r->canon = (flags & PARSER_ROBOTS_CANON) != 0;
    r->crawl_delay = -1;
    agent_name(agent, token, sizeof token);
    st.token = token;
    st.delay[SEL_AGENT] = st.delay[SEL_STAR] = -1;
    if (!txt)
        len = 0;
    if (len > DC_ROBOTS_MAX_BYTES)
        len = DC_ROBOTS_MAX_BYTES;
    if (len >= 2 && (!memcmp(txt, "\xFF\xFE", 2) || !memcmp(txt, "\xFE\xFF", 2))) {
        size_t wl = len - 2;
        wide = utf16_to_utf8((const unsigned char *)txt + 2, &wl, txt[0] == '\xFE');
        txt = wide;
        len = wl > DC_ROBOTS_MAX_BYTES ? DC_ROBOTS_MAX_BYTES : wl;
    }
    s = txt;
    end = txt + len;
    if (len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;
    while (s < end) {
        for (e = s; e < end && *e != '\n' && *e != '\r'; e++)
            ;
        parse_line(r, &st, s,
                   (size_t)(e - s) > ROBOTS_LINE_MAX ? s + ROBOTS_LINE_MAX : e);
        if (e == end)
            break;
        if (e < end && *e == '\r' && e + 1 < end && e[1] == '\n')
            e++;
        s = e + 1;
    }
    select_rules(r, &st);
    free(wide);
    return r;
}

struct parser_robots *parser_robots_all(int allow)
{
    struct parser_robots *r = xcalloc(1, sizeof *r);

    r->mode = allow ? MODE_ALLOW_ALL : MODE_DISALLOW_ALL;
    r->crawl_delay = -1;
    return r;
}

void parser_robots_free(struct parser_robots **rp)
{
    struct parser_robots *r;
    size_t i;

    if (!rp || !*rp)
        return;
    r = *rp;
    for (i = 0; i < r->nsitemaps; i++)
        free(r->sitemaps[i]);
    free(r->sitemaps);
    free(r->rules);
    free(r->pool);
    free(r);
    *rp = NULL;
}

size_t parser_robots_sitemaps(const struct parser_robots *r,
                              const char *const **urls)
{
    *urls = r ? (const char *const *)r->sitemaps : NULL;
    return r ? r->nsitemaps : 0;
}

void parser_agent_token(const char *user_agent, char *out, size_t cap)
{
    size_t n = 0;

    if (!out || cap == 0)
        return;
    while (user_agent && n + 1 < cap &&
           is_token_char((unsigned char)user_agent[n])) {
        out[n] = user_agent[n];
        n++;
    }
    out[n] = '\0';
}

void parser_robots_url_path(const char *url, char *out, size_t cap)
{
    size_t n, start = 0, proto, path, end, i, o = 0;
    const char *p;

    if (!out || cap < 2)
        return;
    snprintf(out, cap, "/");
    if (!url)
        return;
    n = strlen(url);
    if (n >= 2 && url[0] == '/' && url[1] == '/')
        start = 2;
    path = start + strcspn(url + start, "/?;");
    p = strstr(url + start, "://");
    proto = p ? (size_t)(p - url) : n;
    if (proto == n || path < proto)
        proto = start;
    else
        proto += 3;
    path = proto + strcspn(url + proto, "/?;");
    if (path >= n)
        return;
    p = strchr(url + start, '#');
    end = p ? (size_t)(p - url) : n;
    if (end < path)
        return;
    if (url[path] != '/')
        out[o++] = '/';
    for (i = path; i < end && o + 1 < cap; i++)
        out[o++] = url[i];
    out[o] = '\0';
}
