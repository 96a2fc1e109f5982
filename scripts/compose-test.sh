#!/usr/bin/env bash
# compose-test.sh: start the compose cluster of docker/ for real and check
# its crawl. As root on Debian 12, from anywhere in the repository:
#
#   scripts/compose-test.sh
#
# Steps (each prints one "compose-test: ..." line):
#   1. scripts/compose-deps.sh: podman, runc, netavark, aardvark-dns,
#      docker-compose 1.29, debootstrap; podman's containers.conf;
#   2. `podman system service` on a socket of its own, which Debian's
#      docker-compose drives (DOCKER_HOST);
#   3. the base image the Dockerfile's FROM names (ARG DEBIAN), unless
#      podman has it: `debootstrap --variant=minbase bookworm` from the
#      mirror this machine's apt uses, with this machine's apt sources and
#      apt.conf.d copied in (apt inside the build reaches what apt here
#      reaches), then `podman import`. No image registry is needed;
#   4. the images dcrawl, dcrawl-redis and dcrawl-demo-site built from
#      docker/Dockerfile, the secret from docker/make-secret.sh;
#   5. `up` of redis, demo-site, seed and NODES node replicas (prometheus
#      and grafana are left out: their images come from a registry), the
#      nodes with noise.enabled=false (a second compose file) so that the
#      output must equal the manifest exactly;
#   6. waits (at most TIMEOUT s after `up`) until the seed has exited 0 and
#      `dcrawl status --json` shows URLs done and none queued or in flight;
#      every status read must list NODES live nodes and no dead one;
#   7. stops the nodes (SIGTERM: they drain), `dcrawl merge /data/out`,
#      and tests/e2e/check_crawl.py checks the output and the merge
#      against the demo site's manifest (every URL within depth 3 fetched
#      once, nothing else);
#   8. tears down on any exit: `down -v` (containers, network, volumes),
#      the API service stopped. The images stay (the next run builds from
#      podman's cache; REBASE=1 makes the base image again).
#
# HA=1 runs the HA overlay too (docker/docker-compose.ha.yml: a replica
# and three sentinels; node, seed and status on the sentinel URL) and
# kills the master container (SIGKILL) once KILL_AT URLs (default 300) are
# done: the sentinels must promote the replica and the crawl must still
# end equal to the manifest. Status reads from the kill until 30 s after
# the promotion may list nodes dead (their heartbeats wait for the new
# master); every other read must not.
#
# Exit 0 when every check passed. Environment: NODES (3), TIMEOUT (600),
# DCRAWL_SHARED (the shared/ directory holding bench/gen_site.py; default
# ../shared beside the repository), KEEP=1 leaves the cluster running.
#
# Not in CI: on a fresh machine the base image alone (debootstrap) takes
# about 5 minutes and the image builds about 15 more, far past what CI may
# add (about 3 minutes once the images are cached); `docker-compose
# config` is checked in CI (tests/CMakeLists.txt).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NODES=${NODES:-3}
TIMEOUT=${TIMEOUT:-600}
SHARED=${DCRAWL_SHARED:-$ROOT/../shared}
SHARED=$(cd "$SHARED" && pwd)
export DCRAWL_SHARED=$SHARED
PROJECT=dcrawl-compose-test
RUN=/run/dcrawl-compose-test
SOCK=$RUN/podman.sock
DEPTH=3
# the nodes crawl with the noise filter off, so that the output must
# equal the manifest exactly (the filter's own test: tests/e2e/noise.sh)
COMPOSE=(docker-compose -p "$PROJECT" -f docker/docker-compose.yml -f "$RUN/test.yml")
SERVICES=(redis demo-site seed node)
REDIS_URL=redis://redis:6379
HA=${HA:-0}
KILL_AT=${KILL_AT:-300}
if [ "$HA" = 1 ]; then
    COMPOSE+=(-f docker/docker-compose.ha.yml)
    SERVICES=(redis redis-replica sentinel-1 sentinel-2 sentinel-3 demo-site seed node)
    REDIS_URL=redis-sentinel://sentinel-1:26379,sentinel-2:26379,sentinel-3:26379/dcrawl
fi
SVC_PID=
T0=$(date +%s)

say() { echo "compose-test: [$(( $(date +%s) - T0 ))s] $*"; }
die() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (podman runs rootful here)"
[ -f "$SHARED/bench/gen_site.py" ] || die "no $SHARED/bench/gen_site.py (set DCRAWL_SHARED)"

teardown() {
    local rc=$?
    set +e
    if [ "${KEEP:-0}" = 1 ]; then
        say "KEEP=1: cluster left running (DOCKER_HOST=unix://$SOCK)"
        exit $rc
    fi
    if [ -S "$SOCK" ]; then
        "${COMPOSE[@]}" logs --no-color >"$RUN/compose.log" 2>&1
        say "teardown: down -v (the services' logs: $RUN/compose.log)"
        "${COMPOSE[@]}" down -v --remove-orphans -t 30 >"$RUN/down.log" 2>&1 ||
            { say "down failed:"; tail -5 "$RUN/down.log"; }
    fi
    if [ -n "$SVC_PID" ]; then
        kill "$SVC_PID" 2>/dev/null
        wait "$SVC_PID" 2>/dev/null
    fi
    rm -f "$SOCK"
    say "$([ $rc = 0 ] && echo PASS || echo "FAIL (exit $rc)")"
    exit $rc
}

# 1. tools
say "dependencies (scripts/compose-deps.sh)"
bash scripts/compose-deps.sh

# 2. the Docker API of podman
mkdir -p "$RUN"
rm -f "$SOCK"
printf 'version: "3.8"\nservices:\n  node:\n    environment:\n      DCRAWL_NOISE_ENABLED: "false"\n' >"$RUN/test.yml"
podman system service --time=0 "unix://$SOCK" >"$RUN/service.log" 2>&1 &
SVC_PID=$!
trap teardown EXIT
trap 'exit 130' INT TERM
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || die "podman system service did not open $SOCK"
export DOCKER_HOST=unix://$SOCK COMPOSE_DOCKER_CLI_BUILD=0 DOCKER_BUILDKIT=0
say "podman $(podman --version | awk '{print $3}') API on $SOCK (pid $SVC_PID)"
"${COMPOSE[@]}" down -v --remove-orphans >/dev/null 2>&1 || true # a run killed before

# 3. the base image
base_image() {
    local tag dir mirror
    tag=$(sed -n 's/^ARG DEBIAN=//p' docker/Dockerfile)
    [ -n "$tag" ] || die "docker/Dockerfile has no ARG DEBIAN=IMAGE"
    if [ "${REBASE:-0}" != 1 ] && podman image exists "$tag"; then
        say "base image $tag: present"
        return
    fi
    mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
    mirror=${mirror:-http://deb.debian.org/debian}
    dir=$(mktemp -d /var/tmp/dcrawl-base.XXXXXX)
    say "base image $tag: debootstrap --variant=minbase bookworm from $mirror"
    if ! debootstrap --variant=minbase bookworm "$dir/root" "$mirror" >"$RUN/debootstrap.log" 2>&1; then
        tail -5 "$RUN/debootstrap.log"
        rm -rf "$dir"
        die "debootstrap failed"
    fi
    rm -f "$dir/root/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list "$dir/root/etc/apt/sources.list.d/" 2>/dev/null || true
    cp -r /etc/apt/apt.conf.d/. "$dir/root/etc/apt/apt.conf.d/"
    cp -r /etc/apt/keyrings "$dir/root/etc/apt/" 2>/dev/null || true
    rm -rf "$dir/root/var/cache/apt/archives/"*.deb "$dir/root/var/lib/apt/lists/"*
    tar -C "$dir/root" -c . | podman import - "$tag" >/dev/null
    rm -rf "$dir"
    say "base image $tag: imported ($(podman image inspect -f '{{.Size}}' "$tag") bytes)"
}
base_image

# 4. secret and images
sh docker/make-secret.sh
say "building the images (docker/Dockerfile)"
if ! "${COMPOSE[@]}" build redis demo-site node >"$RUN/build.log" 2>&1; then
    tail -20 "$RUN/build.log"
    die "build failed (log: $RUN/build.log)"
fi
say "built: $(podman images --format '{{.Repository}}:{{.Tag}}' | grep -E '/dcrawl(-redis|-demo-site)?:latest' | sort | tr '\n' ' ')"

# 5. the cluster
say "up: ${SERVICES[*]} with $NODES nodes"
"${COMPOSE[@]}" up -d --no-build --scale node="$NODES" "${SERVICES[@]}" >"$RUN/up.log" 2>&1 ||
    { tail -20 "$RUN/up.log"; die "up failed"; }

# dcrawl status --json inside the compose network, in the first node's
# container (`docker-compose run` makes legacy links, which podman refuses)
status_json() {
    "${COMPOSE[@]}" exec -T --index=1 node \
        dcrawl status --redis "$REDIS_URL" --json 2>>"$RUN/status.err"
}

# 6. wait for the crawl; every read must list NODES live nodes, none dead
deadline=$(($(date +%s) + TIMEOUT)) seen_all=0 reads=0 done_reads=0 killed= promoted=
while :; do
    [ "$(date +%s)" -lt "$deadline" ] || die "crawl not finished after ${TIMEOUT}s"
    sleep 3
    js=$(status_json) || continue
    reads=$((reads + 1))
    line=$(python3 -c '
import json, sys
s = json.loads(sys.argv[1]); n = int(sys.argv[2]); t = s.get("total") or {}
live = [x for x in s["nodes"] if x["live"]]; dead = [x for x in s["nodes"] if not x["live"]]
print(len(live), len(dead), t.get("queued", 0), t.get("inflight", 0), t.get("done", 0),
      ",".join("%s:%s" % (x["id"], x.get("inflight")) for x in dead) or "-")
' "$js" "$NODES")
    read -r live dead queued inflight done deadlist <<<"$line"
    say "status: nodes $live live, $dead dead; urls queued $queued, in flight $inflight, done $done"
    if [ "$HA" = 1 ] && [ -z "$killed" ] && [ "$done" -ge "$KILL_AT" ]; then
        podman kill -s KILL "${PROJECT}_redis_1" >/dev/null || die "cannot kill the master container"
        killed=$(date +%s)
        say "HA: master container killed (SIGKILL) at $done URLs done"
    fi
    if [ -n "$killed" ] && [ -z "$promoted" ]; then
        m=$("${COMPOSE[@]}" exec -T sentinel-1 redis-cli -p 26379 sentinel get-master-addr-by-name dcrawl 2>/dev/null | head -1 | tr -d '\r')
        if [ -n "$m" ] && [ "$m" != redis ] && ! podman inspect -f '{{.NetworkSettings.Networks}}' "${PROJECT}_redis_1" 2>/dev/null | grep -q "$m"; then
            promoted=$(date +%s)
            say "HA: the sentinels promoted $m, $((promoted - killed)) s after the kill"
        fi
    fi
    if [ -n "$killed" ] && { [ -z "$promoted" ] || [ "$(date +%s)" -lt $((promoted + 30)) ]; }; then
        [ "$dead" = 0 ] || say "HA: $dead node(s) listed dead during the failover (id:inflight): $deadlist"
        dead=0
    fi
    [ "$dead" = 0 ] || die "node(s) listed dead (id:inflight): $deadlist"
    [ "$live" -ge "$NODES" ] && seen_all=1
    [ "$seen_all" = 1 ] && [ "$live" -lt "$NODES" ] && die "a node left: $live live of $NODES"
    seed_state=$(podman inspect -f '{{.State.Status}} {{.State.ExitCode}}' "${PROJECT}_seed_1" 2>/dev/null || echo "none -")
    case $seed_state in
        "exited 0"|running|created|configured) ;;
        *) "${COMPOSE[@]}" logs --no-color seed | tail -5; die "seed: $seed_state" ;;
    esac
    if [ "$seed_state" = "exited 0" ] && [ "$seen_all" = 1 ] && [ "$queued" = 0 ] &&
       [ "$inflight" = 0 ] && [ "$done" -gt 0 ]; then
        done_reads=$((done_reads + 1))
        [ "$done_reads" -ge 2 ] && break # twice: not a gap between levels
    else
        done_reads=0
    fi
done
[ "$HA" != 1 ] || [ -n "$promoted" ] || die "HA: the master was not killed and replaced (killed: ${killed:-no})"
say "crawl finished: $done URLs done, $reads status reads, never a dead node${killed:+ outside the failover}"
"${COMPOSE[@]}" logs --no-color node >"$RUN/nodes.log" 2>&1
say "node loop warnings (a step over node_timeout/5): $(grep -c 'loop was blocked' "$RUN/nodes.log" || true)"
grep 'loop was blocked' "$RUN/nodes.log" | head -5 | sed 's/^/compose-test:   /' || true

# 7. stop the nodes (they drain), merge, check against the manifest
"${COMPOSE[@]}" stop -t 60 node >/dev/null 2>&1
bad=$(podman ps -a --filter "label=com.docker.compose.project=$PROJECT" \
      --filter label=com.docker.compose.service=node \
      --format '{{.Names}} {{.Status}}' | grep -v 'Exited (0)' || true)
[ -z "$bad" ] || die "node(s) did not exit 0: $bad"
say "nodes stopped (exit 0); merging"
# the image's dcrawl on the output volume (podman run: see status_json)
podman run --rm --network none -v "${PROJECT}_crawl-out:/data/out" dcrawl:latest \
    merge /data/out >"$RUN/merge.log" 2>&1 ||
    { tail -5 "$RUN/merge.log"; die "dcrawl merge failed"; }
vol() { podman volume inspect -f '{{.Mountpoint}}' "${PROJECT}_$1"; }
out=$(vol crawl-out) site=$(vol demo-site)
say "output: $(ls "$out"/depth-*/*.jsonl | wc -l) JSON-lines files, $(cat "$out"/depth-*/*.jsonl | wc -l) lines; merged: $(wc -l <"$out/merged/pages.jsonl") lines"
python3 tests/e2e/check_crawl.py --bench "$SHARED/bench" --manifest "$site/manifest.json" \
    --depth "$DEPTH" --out "$out" | sed 's/^/compose-test: check: /'
[ "${PIPESTATUS[0]}" = 0 ] || die "check_crawl.py failed"
