#!/usr/bin/env bash
# e2e cluster-rcluster: e2e-cluster against a 3-master Redis Cluster that the
# test starts (rcluster-lib.sh: rcluster_start NAME starts the masters on
# free 127.0.0.1 ports with the seen-set module, creates the cluster and
# sets RC=redis-cluster://host:port,...; see cluster-lib.sh). 3 node daemons
# crawl the 60 x 100 site to depth 3: the union of their outputs is the
# manifest's depth-3 set, no canonical URL requested twice, no host fetched
# by two nodes at a time, pages per node within 25 % of the mean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
RCLIB=$(dirname "$0")/rcluster-lib.sh
if [ ! -f "$RCLIB" ]; then
    fail "rcluster-lib.sh missing ($RCLIB): no way to start a Redis Cluster (rcluster_start NAME sets RC)"
    finish
fi
. "$RCLIB"
rcluster_start cluster || { fail "rcluster_start: Redis Cluster did not start"; finish; }
R=$RC
echo "Redis Cluster: $R"
check "Redis Cluster reports cluster_state:ok" bash -c "$(declare -f rcli); rcli '$R' cluster info | grep -q 'cluster_state:ok'"
S=$(site 60 100) || exit 1
cluster_serve "$S" || exit 1
crawl3 "$R" "$S" "Redis Cluster"
serve_stop
finish
