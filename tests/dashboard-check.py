#!/usr/bin/env python3
"""dashboard-check.py SRC: the Grafana dashboard of docker/ is sound.

- docker/grafana/dashboards/dcrawl.json parses as JSON, has panels, and
  every panel has at least one PromQL query (a target's "expr");
- every metric a query names is one a dcrawl node exports, as listed in
  docker/grafana/metric-names.txt (base names: a histogram's _bucket,
  _sum and _count suffixes are its base name);
- the panels the compose setup promises are there: pages/s per node,
  errors by kind, queue per depth, dedup hit rate, Redis round trips;
- every panel's datasource is the provisioned one (its uid in
  docker/grafana/provisioning/datasources/*.yml).
The metric check runs first on queries that must fail (an unknown metric,
a misspelt one, a suffix on a non-histogram), to show it catches them.
Prints TAP-like lines; exit 1 on any failure.
"""
import glob
import json
import re
import sys

# PromQL words that are not metric names: aggregations, functions (also
# caught by the "(" that follows them), modifiers, keywords
KEYWORDS = {
    "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk",
    "bottomk", "quantile", "count_values", "group", "by", "without", "on",
    "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
    "offset", "inf", "nan",
}
SUFFIXES = ("_bucket", "_sum", "_count")

passes = fails = 0


def report(good, what):
    global passes, fails
    if good:
        passes += 1
        print("ok - " + what)
    else:
        fails += 1
        print("FAIL - " + what)


def metric_names(expr):
    """The metric names a PromQL expression refers to."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)          # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)         # range / subquery windows
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
               " ", e)                        # label lists
    names = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        word, rest = m.group(0), e[m.end():]
        if word.lower() in KEYWORDS or rest.lstrip().startswith("("):
            continue
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] == "."):
            continue                          # 1e3, 0.95 pieces
        names.append(word)
    return names


def unknown_names(expr, known, histograms):
    bad = []
    for n in metric_names(expr):
        if n in known:
            continue
        base = next((n[: -len(s)] for s in SUFFIXES if n.endswith(s)), None)
        if base not in histograms:
            bad.append(n)
    return bad


def exprs(node):
    """Every "expr" string anywhere in the dashboard."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "expr" and isinstance(v, str):
                yield v
            else:
                yield from exprs(v)
    elif isinstance(node, list):
        for v in node:
            yield from exprs(v)


def main():
    src = sys.argv[1]
    with open(src + "/docker/grafana/metric-names.txt") as f:
        known = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    # histograms (metric-names.txt: the names ending in _seconds): their
    # _bucket/_sum/_count series are exported
    histograms = {n for n in known if n.endswith("_seconds")}
    report(len(known) >= 10 and all(re.fullmatch(r"dcrawl_[a-z0-9_]+", n) for n in known),
           "metric-names.txt: %d dcrawl_ names" % len(known))

    # the check catches what it must
    for expr in ("rate(dcrawl_pages_total[1m])",
                 'sum(rate(dcrawl_responses_totl{class="2xx"}[1m]))',
                 "dcrawl_responses_total_count",
                 "up"):
        report(unknown_names(expr, known, histograms) != [],
               "the check rejects %s" % expr)
    report(unknown_names('histogram_quantile(0.95, sum by (le) '
                         '(rate(dcrawl_fetch_duration_seconds_bucket[5m])))',
                         known, histograms) == [],
           "the check accepts a histogram's _bucket")

    path = src + "/docker/grafana/dashboards/dcrawl.json"
    try:
        with open(path) as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        report(False, "dcrawl.json parses: %s" % e)
        return
    report(True, "dcrawl.json parses")
    panels = dash.get("panels", [])
    report(len(panels) > 0 and all(list(exprs(p)) for p in panels),
           "%d panels, each with a query" % len(panels))
    all_exprs = list(exprs(dash))
    for expr in all_exprs:
        bad = unknown_names(expr, known, histograms)
        report(not bad and metric_names(expr),
               "query names exported metrics only: %s%s" % (
                   expr, " (unknown: %s)" % ", ".join(bad) if bad else ""))
    wanted = {
        "pages/s per node": r"by \(instance\).*dcrawl_responses_total",
        "errors by kind": r"by \(kind\).*dcrawl_fetch_errors_total",
        "queue per depth": r"by \(depth\).*dcrawl_frontier_queued",
        "dedup hit rate": r'dcrawl_links_dropped_total\{reason="cache"\}.*/.*dcrawl_links_found_total',
        "Redis round trips": r"dcrawl_redis_round_trips_total",
    }
    for what, pat in wanted.items():
        report(any(re.search(pat, e) for e in all_exprs), "a panel shows %s" % what)

    uids = set()
    for ds in glob.glob(src + "/docker/grafana/provisioning/datasources/*.yml"):
        uids |= set(re.findall(r"^\s*uid:\s*(\S+)", open(ds).read(), re.M))
    used = {p.get("datasource", {}).get("uid") for p in panels}
    used |= {t.get("datasource", {}).get("uid") for p in panels for t in p.get("targets", [])}
    report(uids and used <= uids, "panels use the provisioned datasource %s" % sorted(uids))


main()
print("dashboard-check: %d passed, %d failed" % (passes, fails))
sys.exit(1 if fails else 0)
