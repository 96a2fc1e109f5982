/*
 * dc-limits.h: the fixed limits that more than one module must agree on,
 * each defined once here (part of the conf module's public interface;
 * include it where a limit is used). Named dc-limits.h, not limits.h: conf/
 * is on every target's include path and would hide the system <limits.h>.
 *
 * DC_DEPTH_MAX   the deepest crawl depth (seeds are depth 0). crawl.depth is
 *                checked against it (conf-table.c), the node keeps one
 *                writer per depth, and the per-depth figures of the node
 *                summary, `dcrawl status` and the merge's summary.json are
 *                arrays of DC_DEPTHS. 63 keeps those arrays small; a crawl
 *                63 links deep from its seeds is far past any useful scope.
 * DC_DEPTHS      depths 0 .. DC_DEPTH_MAX: the length of per-depth arrays.
 * DC_ROBOTS_MAX_BYTES
 *                how much of a robots.txt is fetched, inflated and parsed:
 *                500 KiB, the minimum RFC 9309 section 2.5 asks a crawler
 *                to parse. Rules past it are not read, by the node
 *                (node.c, robots-cache.c), by `dcrawl robots` (cmd-robots.c)
 *                and by the parser (parser/robots.c) alike.
 */
#ifndef DC_LIMITS_H
#define DC_LIMITS_H

#define DC_DEPTH_MAX 63
#define DC_DEPTHS (DC_DEPTH_MAX + 1)

#define DC_ROBOTS_MAX_BYTES ((size_t)500 * 1024)

#endif
