/*
 * noise.h: decides which extracted links are navigation noise and never
 * enter the frontier. Two stages:
 *
 *  1. Block stage (stateless, per page; runs on the parse workers). The
 *     parser cuts the DOM into blocks and measures each block's visible
 *     text and link text (parser_set_blocks in parser.h) and notes its
 *     context (semantic navigation, main content). A block whose
 *     link_text / text is above noise.link_ratio (a block with links and no
 *     text counts as 1) is over the ratio: noise_block_is_nav() says so.
 *     The block rule (below) decides which of those links are navigation;
 *     they are dropped and become the host's noise samples.
 *
 *  2. Cluster stage (per host, stateful; runs on the thread that owns the
 *     host, the node's main thread). URLs are clustered single-pass: a URL
 *     joins the first cluster whose representative has LCS similarity
 *     >= noise.similarity, else founds a new cluster. Similarity is the mean
 *     of LCS/len(a) and LCS/len(b), on the path+query for links to the
 *     page's own host and on the URL without its scheme otherwise. Noise
 *     samples are clustered the same way in a second set. A surviving URL
 *     whose cluster representative is similar to the representative of a
 *     noise cluster that has at least noise.template_min distinct members
 *     is dropped too (with template_min 1 this is the rule as first
 *     written; see noise.c for why the default is 2), except, under the
 *     signals rule, a link the block rule kept as part of an outline (O)
 *     or a table of contents (T), and a link inside main content (M): its
 *     block showed what it is, which a resemblance to the host's menus
 *     does not overturn. The Linux kernel's documentation lists its ABI
 *     pages in a table of contents of sections and in the sidebar menu,
 *     under names like the menu's; pandas and SciPy list a class's
 *     methods in a table in main (pandas.api.extensions.ExtensionArray.
 *     astype.html) whose URLs share all but a word with the sidebar's
 *     (...ExtensionArray.html): they were look-alikes. In main, as at the
 *     block stage, only repetition makes noise.
 *
 * Block rule (noise.block_rule), a step between the two stages
 * (noise_repeat, per host, on the owning thread). `signals`, the default:
 * a block over the ratio is navigation only when a second signal agrees.
 * The signals of a link's nearest block B (the parser's block flags):
 *   R  B's own link_text / text is over noise.link_ratio (no text: 1);
 *   S  B is inside semantic navigation: nav, aside, menu, a header or
 *      footer outside sectioning content (HTML-AAM banner/contentinfo),
 *      or role navigation, banner, contentinfo, complementary, menu;
 *   M  B is inside main content: main, article, role main or article;
 *   P  the link repeats: B has NOISE_JUDGE_MIN or more links of which at
 *      least NOISE_REPEAT_SHARE were seen in over-ratio blocks (not S) of
 *      the host's earlier pages, and this link is one of them;
 *   O  B is an outline: NOISE_OUTLINE_MIN or more of its links, and at
 *      least NOISE_OUTLINE_SHARE of them, name a section of a page
 *      ("page.html#part"): a table of contents of documents, such as the
 *      chapter menu of Erlang/OTP's guides, often the only way to their
 *      chapters. Menus, pagers and traps link to pages, not to sections.
 *   T  B is S, has NOISE_TOC_MIN or more links, fewer than
 *      NOISE_CONTEXT_SHARE of them in the host's navigation history and
 *      fewer than NOISE_TOC_QUERY_SHARE with a query: a menu that big,
 *      shown for the first time, that links to documents is a table of
 *      contents (Erlang/OTP's index lists every guide only in its side
 *      menu; an mdBook book lists its chapters only in its sidebar), while
 *      facets and sort orders link to variations of one page (queries).
 *      Its links are kept; as they enter the navigation history like any
 *      S link, the same menu is dropped from the pages that show it again.
 *      NOISE_TOC_MIN is 16: the Read the Docs theme's side menu holds a
 *      Sphinx site's whole table of contents (Hypothesis: 23 links, the
 *      only way to 27 of its 50 pages); the bench site's sidebars of
 *      posts reach 21 links, and taking them for tables of contents where
 *      they are new costs it 0.3 points of navigation recall and 4 pages
 *      fetched through navigation only of 1,573 (32 before: 0.9733 and 48).
 *   C  B is S and its navigation region (the outermost semantic
 *      navigation around it) copies the page's content: NOISE_JUDGE_MIN or
 *      more link occurrences, at least NOISE_MIRROR_SHARE of them to links
 *      the page also has outside semantic navigation (parser_block
 *      nav_links, nav_mirror). Such a menu names what the page itself
 *      presents: the top bar of a documentation home page whose main
 *      content shows the same sections as cards, plus one it does not
 *      (pydata-sphinx-theme's "Release notes" in SciPy's and pandas'
 *      documentation, linked from nowhere else), or Tomcat's side menu,
 *      whose user guide the home page lists and whose API sections it does
 *      not. Its links the host's navigation has not shown yet are kept;
 *      those it has are navigation as for any S block. A site menu beside
 *      a list of articles (a blog's or a shop's) copies none.
 * A link is navigation iff R and not O and not T and not (C and new) and
 * (M ? P : (S or P)), unless the page guard or the dead-end rule below
 * keeps it: inside main content only repetition makes noise. Links of O blocks
 * are not recorded. Links of S blocks are not recorded for P
 * (a table of contents in main whose entries also sit in a sidebar would
 * look repeated). A non-semantic header or menu built of divs is kept on
 * the host's first page and dropped from its recurrences on; a pager's
 * "next" (a link not seen before) is never P, so P never drops a link on
 * its first sighting. Contextual links: S links are recorded in a
 * navigation history of their own; once the host has had
 * NOISE_CONTEXT_PAGES pages judged, a link of an S block of
 * NOISE_JUDGE_MIN+ links of which at least NOISE_CONTEXT_SHARE are in
 * that history, and which itself is not, is kept: a per-page link of a
 * recurring menu (Javadoc's "Use" link to class-use/X.html, the only way
 * to those pages), not the menu. Page guard: when the navigation verdicts
 * would drop at least NOISE_GUARD_SHARE of a page's links and the page has
 * fewer than NOISE_GUARD_TEXT characters of text outside links (an index,
 * a table of contents, a pager page), the links that only R and P
 * condemned are kept. Dead end: when nothing but navigation leads on from
 * a page into its host (no link kept to another page of the host than
 * the page itself and the host's root: a home page of external links
 * beside a side menu that holds the whole site, as xarray's
 * documentation), its S links to the host that the navigation history
 * has not shown are kept: a crawler stopped there would lose the site.
 * An entry page (the caller's say: a seed) is a dead end too when its
 * content leads on to fewer than NOISE_ENTRY_LEADS pages of its host and
 * its menus show more new ones than that: a documentation home page of
 * prose whose only links on are the index and the search page, beside the
 * side menu that is the way into the site (IPython's); a home page that
 * lists its articles, or a small header menu of About and Contact beside
 * a few content links, stays navigation.
 *
 * Noise samples under `signals`: only S links already in the navigation
 * history (recurring navigation). An S link on its first sighting and a
 * P link (a re-sighting of a kept link) are dropped without becoming
 * samples (NOISE_NAV_QUIET): one page's sidebar ("next topic", Javadoc's
 * per-class links) and a pager's numbers would otherwise make the
 * content URLs that resemble them look-alikes. And a noise cluster drops
 * look-alikes only once it was fed on two or more pages of the host (a
 * recurring template).
 *
 * `ratio` is the rule exactly as first written: every block over the
 * ratio is navigation (R alone). `repeated`: a block over the ratio is
 * navigation only when it repeats across the host's pages, that is when
 * at least NOISE_REPEAT_SHARE of its links were seen in over-ratio blocks
 * of NOISE_REPEAT_MIN or more links on earlier pages of the same host;
 * otherwise its links stay content. A page's own table of contents (new
 * links) is kept, while the header, sidebar and footer that recur are
 * dropped from the host's second page on. On a host's first page nothing
 * is known to repeat yet, so its navigation is kept (the price: about one
 * page's worth of nav links per host enters the frontier). Memory
 * (repeated and signals): each host keeps at most
 * NOISE_SEEN_MAX link fingerprints (4-way buckets, the entry seen longest
 * ago replaced), hosts LRU as for the clusters.
 *
 * Template budgets: each surviving cluster counts the URLs the caller
 * reports as admitted into the frontier (noise_admitted); once a cluster
 * has admitted noise.cluster_budget URLs it refuses the rest. This counts
 * admitted URLs, not fetched pages: an admitted URL is fetched unless the
 * crawl ends first, so the two differ only at the edge of a crawl.
 *
 * State is bounded: noise.max_clusters clusters per set per host and
 * NOISE_MAX_HOSTS hosts, least recently used dropped beyond both.
 *
 * Thread rules: noise_block_is_nav() and noise_lcs() are reentrant; a
 * struct noise is owned by one thread.
 */
#ifndef DC_NOISE_H
#define DC_NOISE_H

#include <stddef.h>
#include <stdint.h>

#define NOISE_MAX_HOSTS 1024 /* hosts with cluster state per struct noise */
#define NOISE_KEY_MAX 1024   /* bytes of a URL compared (longer: cut) */
#define NOISE_SEEN_MAX 2048  /* link fingerprints per host (repeated rule) */
#define NOISE_REPEAT_SHARE 0.5 /* seen share that makes a block repeated */
#define NOISE_REPEAT_MIN 2     /* links a block needs to be recorded */
#define NOISE_JUDGE_MIN 3      /* signals: links a block needs to be P */
#define NOISE_GUARD_SHARE 0.9  /* signals: page guard, dropped link share */
#define NOISE_GUARD_TEXT 500   /* signals: page guard, non-link text below */
#define NOISE_CONTEXT_PAGES 2  /* signals: contextual links, host pages */
#define NOISE_CONTEXT_SHARE 0.5 /* signals: ... and known share of the menu */

/* noise.block_rule */
enum noise_block_rule {
    NOISE_RULE_RATIO = 0,    /* over the ratio: navigation (the spec) */
    NOISE_RULE_REPEATED = 1, /* over the ratio and repeated: navigation */
    NOISE_RULE_SIGNALS = 2   /* over the ratio and a second signal */
};

/* noise_repeat's verdict for a navigation link that does not become a
 * noise sample of the cluster stage (signals rule; noise_filter drops it
 * like any navigation link). */
#define NOISE_NAV_QUIET 2

/* Signals of a link's block, the input of noise_repeat. */
#define NOISE_SIG_RATIO 0x1u /* R: over noise.link_ratio */
#define NOISE_SIG_NAV 0x2u   /* S: inside semantic navigation */
#define NOISE_SIG_MAIN 0x4u  /* M: inside main content */
#define NOISE_SIG_OUTLINE 0x8u /* O: an outline (signals rule only) */
#define NOISE_OUTLINE_MIN 3      /* O: section links a block needs */
#define NOISE_OUTLINE_SHARE 0.25 /* O: ... and their share of its links */
#define NOISE_TOC_MIN 16         /* T: links of a new big menu */
#define NOISE_ENTRY_LEADS 5      /* dead end: an entry page's content
                                    pages below this */
#define NOISE_TOC_QUERY_SHARE 0.25 /* T: ... below this share with a query */
#define NOISE_SIG_MIRROR 0x10u   /* C: a menu copying the page's content */
#define NOISE_BLOCK_NONE UINT32_MAX /* a link without a block (past the DOM:
                                       PARSER_BLOCK_NONE), content */
#define NOISE_MIRROR_SHARE 0.5   /* C: share of its links found in content */

struct noise;

struct noise_conf {
    int enabled;
    double link_ratio;     /* block stage: nav above this link-text share */
    double similarity;     /* cluster stage: join threshold */
    size_t max_clusters;   /* per host and set */
    size_t template_min;   /* distinct members before a noise cluster drops
                              look-alikes (>= 1) */
    uint64_t cluster_budget; /* admitted URLs per cluster, 0 = no limit */
    int block_rule;          /* enum noise_block_rule */
};

/* Decisions, added up by noise_filter. */
struct noise_stats {
    size_t seen, dropped_block, dropped_cluster, refused_budget;
    size_t kept_unrepeated; /* repeated, signals: over-ratio links kept */
    size_t kept_guard;      /* signals: of those, kept by the page guard
                               or the dead-end rule */
};

/* Why a link was dropped (noise_filter's verdict per link). */
enum noise_verdict {
    NOISE_KEEP = 0,
    NOISE_BLOCK = 1,   /* in a navigation block only */
    NOISE_CLUSTER = 2, /* looks like the host's navigation links */
    NOISE_BUDGET = 3   /* its template used up its budget */
};

/* "kept", "block", "cluster" or "budget"; NULL for another value. */
const char *noise_verdict_name(unsigned v);

/* The letters of sig (NOISE_SIG_*: R S M O C, in that order) into buf,
 * NUL-terminated; "-" for none. */
#define NOISE_SIG_LETTERS 6 /* buf size */
void noise_sig_letters(unsigned sig, char buf[NOISE_SIG_LETTERS]);

/* Block stage: is a block with these sums navigation? Ratio above
 * link_ratio, or links and no text. */
int noise_block_is_nav(double link_ratio, size_t text, size_t link_text);

/* A block's signals (NOISE_SIG_*, the input of noise_repeat) from its
 * measures (struct parser_block): text and link_text (R), inside semantic
 * navigation (snav: S) or main content (main: M), its links and how many
 * of them name a section of a page (nsect: O), its navigation region's
 * links and how many of them the page also has outside navigation
 * (nav_links, nav_mirror: C). */
unsigned noise_block_signals(double link_ratio, size_t text, size_t link_text,
                             int snav, int main, size_t nlinks, size_t nsect,
                             size_t nav_links, size_t nav_mirror);

/* "signals", "ratio" or "repeated" into *rule; DC_EINVAL otherwise. */
int noise_rule_parse(const char *s, int *rule);

/* c is copied. */
struct noise *noise_new(const struct noise_conf *c);

/*
 * Cluster stage for the n links of one page of `host` ("host[:port]" of
 * the page, as parser_url_host gives it). url(ud, i) returns canonical
 * URL i (NUL-terminated); nav[i] is noise_repeat's verdict for link i
 * (!= 0: navigation, a noise sample unless NOISE_NAV_QUIET; NULL: none;
 * noise_repeat must have run on nav first). Writes verdict[i] (enum
 * noise_verdict) and ticket[i] (NULL ok: the kept link's cluster, for
 * noise_admitted; 0 for none) and adds to *st (NULL ok). The links that
 * the noise_repeat call just before (same n; signals rule) kept as an
 * outline or a table of contents, or found inside main content, are not
 * tested for looking like navigation, only against their template budget.
 * Disabled: every verdict is NOISE_KEEP and only seen counts.
 */
typedef const char *(*noise_url_fn)(void *ud, size_t i);
void noise_filter(struct noise *nz, const char *host, size_t hostlen,
                  noise_url_fn url, void *ud, size_t n,
                  const unsigned char *nav, unsigned char *verdict,
                  uint64_t *ticket, struct noise_stats *st);

/*
 * The block rule, between the block stage and noise_filter (which needs
 * its output), for the same n links of one page of `host`: block[i] is
 * link i's block (any numbering unique within the page; NOISE_BLOCK_NONE
 * for a link found past the DOM, which is content and, under signals,
 * never a look-alike); nav[i] holds link i's signals (NOISE_SIG_*) on
 * entry and the verdict on return: 0 content, 1 navigation,
 * NOISE_NAV_QUIET navigation that is no sample. page is the page's
 * canonical URL (NULL: not known): a link to it does not lead on (the
 * dead-end rule); entry != 0 for an entry page (a seed). page_text is the page's visible text outside links, in
 * characters (the page guard's measure).
 *  ratio:    nav = R.
 *  repeated: nav = R, then cleared for the links of every over-ratio
 *            block that does not repeat (fewer than NOISE_REPEAT_SHARE of
 *            its links seen in over-ratio blocks of the host's earlier
 *            pages); records the links of this page's over-ratio blocks
 *            of at least NOISE_REPEAT_MIN links.
 *  signals:  see the top of this file.
 * Over-ratio links kept are added to st->kept_unrepeated. Disabled: nav
 * is R (noise_filter then keeps everything). block NULL: nav = R.
 */
void noise_repeat(struct noise *nz, const char *host, size_t hostlen,
                  const char *page, int entry, noise_url_fn url, void *ud,
                  size_t n,
                  const uint32_t *block, unsigned char *nav, size_t page_text,
                  struct noise_stats *st);

/* A kept link entered the frontier: charge it to its cluster's budget.
 * A ticket whose cluster was dropped since (LRU) is ignored, as is 0. */
void noise_admitted(struct noise *nz, uint64_t ticket);

void noise_free(struct noise **nz);

/* LCS length of a and b, bit-parallel (O(n * ceil(m / 64)) word ops). */
size_t noise_lcs(const char *a, size_t alen, const char *b, size_t blen);

/* mean of LCS/alen and LCS/blen (1 for two empty strings). */
double noise_similarity(const char *a, size_t alen, const char *b,
                        size_t blen);

/*
 * Persistence of the repetition state, so that it survives a host's
 * partition moving to another node (the node keeps it in Redis, in the
 * host's partition: frontier_noise_get / frontier_noise_put).
 *
 * A host's state is a blob of its page counter and its most recent
 * fingerprints: at most NOISE_STATE_KEEP entries of 8 bytes plus a 1-3
 * byte age each, so at most NOISE_STATE_MAX_BYTES (5,648 bytes; a host
 * whose pages share one 100-link menu takes about 1 KB). Stored in Redis
 * as one field of the partition's HASH: on the bench site (10 x 200) a
 * host's blob is 1.7 KB and costs 2.0 KB of MEMORY USAGE, so a million
 * such hosts take about 2 GB, and at most about 6 GB at the bound
 * (bench/noise-state.sh measures it).
 * The blob is versioned (NOISE_STATE_VERSION); an import of a blob that
 * is malformed, truncated or of another version changes nothing and
 * returns DC_EINVAL.
 *
 * Dirty hosts: a host whose page counter moved since its state was last
 * exported, imported or taken. noise_state_take_dirty hands their blobs
 * over (also of dirty hosts dropped by the LRU since the last call, at
 * most NOISE_STATE_GONE_MAX of them) and marks them clean.
 */
#define NOISE_STATE_VERSION 1
#define NOISE_STATE_KEEP 512       /* fingerprints per host blob */
#define NOISE_STATE_MAX_BYTES (3 + 10 + 3 + NOISE_STATE_KEEP * 11)
#define NOISE_STATE_GONE_MAX 4096  /* dropped dirty hosts kept for saving */

/* One host's state: host (NUL-terminated) and its blob, both owned. */
struct noise_state {
    char *host;
    size_t hostlen;
    unsigned char *blob;
    size_t len;
};

/* Does the configured rule use the repetition state (noise enabled and
 * a block rule other than ratio)? Otherwise nothing need be stored. */
int noise_state_used(const struct noise *nz);

/* Does nz hold state for host (judged a page of it, or imported)? */
int noise_state_has(struct noise *nz, const char *host, size_t hostlen);

/* host's state as a blob into out (NOISE_STATE_MAX_BYTES bytes); its
 * length, 0 when nz holds no repetition state for host. Marks it clean. */
size_t noise_state_export(struct noise *nz, const char *host, size_t hostlen,
                          unsigned char *out);

/*
 * Merge a blob into host's state (a fresh host takes it as it is; entries
 * already held keep the more recent sighting). The host is held from then
 * on (noise_state_has) even when blob is NULL or len 0 (nothing stored:
 * DC_OK) or the blob is refused (DC_EINVAL, nothing merged). A no-op when
 * noise is disabled. Leaves the host clean.
 */
int noise_state_import(struct noise *nz, const char *host, size_t hostlen,
                       const void *blob, size_t len);

/* The dirty hosts' states (caller owns *out: noise_state_free); their
 * number. Marks them clean. */
size_t noise_state_take_dirty(struct noise *nz, struct noise_state **out);
void noise_state_free(struct noise_state *s, size_t n);

#endif
