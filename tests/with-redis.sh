#!/usr/bin/env bash
# with-redis.sh CMD [ARG...]: run CMD against a private redis-server on a
# unix socket (no TCP port) in a fresh temp dir; DCRAWL_TEST_REDIS holds its
# URL. The server is stopped afterwards whatever CMD returns. It loads the
# seen-set module when DCRAWL_SEEN_MODULE names it (empty or "none": not
# loaded, the b256-i64 fallback is tested).
set -u
dir=$(mktemp -d /tmp/dcrawl-redis.XXXXXX)
mod=()
case "${DCRAWL_SEEN_MODULE:-}" in
    ''|none) ;;
    *) mod=(--loadmodule "$DCRAWL_SEEN_MODULE") ;;
esac
redis-server --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
    --dir "$dir" --save '' --appendonly no --daemonize no \
    --set-max-intset-entries 8192 "${mod[@]}" >"$dir/redis.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.05; done
if [ ! -S "$dir/redis.sock" ]; then echo "with-redis: redis-server did not start" >&2; cat "$dir/redis.log" >&2; kill $pid 2>/dev/null; exit 1; fi
export DCRAWL_TEST_REDIS="unix://$dir/redis.sock"
"$@"
rc=$?
kill $pid 2>/dev/null; wait $pid 2>/dev/null
rm -rf "$dir"
exit $rc
