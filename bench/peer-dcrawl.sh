# dcrawl as a peer of shared/bench/run_peers.sh (copied into the harness's
# peers/ folder by bench/crawl-bench.sh). Same roots, depth, timeout and
# scoring as every other peer. Like the peers it runs with no politeness
# delay and high per-host and per-IP concurrency (DCRAWL_HOST_CONNS, default
# 32), with noise removal off (the peers follow every link), on its
# embedded Redis.
peer_dcrawl_deps() { echo redis-server; }
peer_dcrawl_version() { "$DCRAWL_BIN" --version; }
peer_dcrawl_run() {
    local roots=$1 depth=$2 out=$3
    "$DCRAWL_BIN" crawl --seeds "$roots" --depth "$depth" --out "$out/crawl" -q \
        --set politeness.delay=0 --set politeness.host_connections="${DCRAWL_HOST_CONNS:-32}" \
        --set politeness.ip_connections="${DCRAWL_HOST_CONNS:-32}" \
        --set noise.enabled=false ${DCRAWL_BENCH_SETS:-}
}
# every fetch the node recorded (per-node files, not the merged copy)
peer_dcrawl_fetchlog() {
    python3 -c 'import json,sys,glob
for p in sorted(glob.glob(sys.argv[1] + "/crawl/depth-*/*.jsonl")):
    for l in open(p):
        r = json.loads(l)
        if not r.get("skipped"): # never requested (robots.txt)
            print("%s\t%s" % (r["status"] or "ERR", r["url"]))' "$1"
}
