#!/usr/bin/env bash
# e2e cluster: 3 node daemons crawl the 60 x 100 site to depth 3 against one
# redis-server. The union of their outputs is the manifest's depth-3 set, no
# canonical URL is requested twice (nginx log), no host is fetched by two
# nodes at a time (X-Dcrawl-Node in the log), pages per node within 25 % of
# the mean, and every node stops cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
S=$(site 60 100) || exit 1
cluster_serve "$S" || exit 1
redis_start cluster || exit 1
crawl3 "$R" "$S" "one redis-server"
serve_stop
finish
