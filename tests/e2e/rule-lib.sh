# rule-lib.sh: helpers for the tests that crawl a generated one-host site
# (127.0.1.1:8080) with the default noise rule and with the rule as first
# written (noise.block_rule=ratio), then score each crawl against the
# site's content.txt (pages that must be fetched) and navonly.txt (pages
# that must not be). Sourced after lib.sh.

# crawl_rules SITE DEPTH: serve SITE, crawl it under both rules into
# $WORK/out-RULE (log crawl-RULE.log, exit status rc-RULE), stop serving
crawl_rules() {
    local rule set
    serve "$1" || exit 1
    for rule in default ratio; do
        set=(); [ $rule = ratio ] && set=(--set noise.block_rule=ratio)
        timeout 300 "$DCRAWL" crawl --depth "$2" --out "$WORK/out-$rule" \
            --set politeness.delay=0 "${set[@]}" http://127.0.1.1:8080/ \
            >"$WORK/crawl-$rule.log" 2>&1
        echo $? >"$WORK/rc-$rule"
        cat "$WORK/crawl-$rule.log"
    done
    serve_stop
}

# compare SITE RULE WANT: the pages RULE's crawl fetched (status 200)
# against SITE/content.txt and SITE/navonly.txt; WANT "whole": every
# content page and no nav-only page, "loses": some content page missing
compare() {
    python3 - "$1" "$WORK/out-$2/merged/pages.jsonl" "$2" "$3" <<'PY'
import json, sys
site, pages, rule, want = sys.argv[1:]
content = set(open(site + "/content.txt").read().split())
navonly = set(open(site + "/navonly.txt").read().split())
got = set()
for line in open(pages):
    p = json.loads(line)
    if p.get("status") == 200:
        got.add(p["url"])
miss, nav = sorted(content - got), sorted(navonly & got)
print("%s: %d of %d content pages fetched, missing %s; nav-only fetched %s"
      % (rule, len(content & got), len(content), miss[:8], nav))
if want == "whole":
    sys.exit(0 if not miss and not nav else 1)
sys.exit(0 if miss else 1)  # "loses": the literal ratio rule cuts it off
PY
}
