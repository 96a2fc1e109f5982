#!/usr/bin/env bash
# compose-deps.sh: install what scripts/compose-test.sh needs on Debian 12
# (apt-get; run as root), only what is missing, and configure podman:
#
#   podman, netavark, aardvark-dns  containers, their network and the DNS
#                                   that resolves service names and aliases
#   runc                            the OCI runtime (crun, podman's default,
#                                   refuses a cgroup v1 host whose cgroup2
#                                   mount lists controllers: "cgroups in
#                                   hybrid mode not supported")
#   docker-compose (1.29)           drives podman through its Docker API
#                                   socket (`podman system service`)
#   debootstrap                     the Debian base image, since no image
#                                   registry may be reachable
#
# /etc/containers/containers.conf gets, under [containers],
# `default_ulimits = []` (podman's default nofile/nproc limits cannot be
# set in some sandboxes and every container start fails) and, under
# [network], `network_backend = "netavark"` (CNI has no DNS for aliases)
# and, under [engine], `runtime = "runc"`; settings already there are kept. Not part of scripts/deps.sh: CI does
# not run the compose cluster (scripts/compose-test.sh says why).
set -euo pipefail

PKGS=(podman runc netavark aardvark-dns docker-compose debootstrap)
CONF=/etc/containers/containers.conf

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "compose-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# set KEY = VALUE in [SECTION] of $CONF unless KEY is set there already
conf_set() {
    local section=$1 key=$2 value=$3
    mkdir -p "$(dirname "$CONF")"
    touch "$CONF"
    python3 - "$CONF" "$section" "$key" "$value" <<'PY'
import re, sys
path, section, key, value = sys.argv[1:]
lines = open(path).read().splitlines()
cur, start, end = None, None, len(lines)
for i, l in enumerate(lines):
    m = re.match(r'\s*\[([^\]]+)\]\s*$', l)
    if m:
        if cur == section:
            end = i
            break
        cur = m.group(1)
        if cur == section:
            start = i
if start is None:
    lines += ["[%s]" % section, "%s = %s" % (key, value)]
elif not any(re.match(r'\s*%s\s*=' % re.escape(key), l) for l in lines[start + 1:end]):
    lines.insert(start + 1, "%s = %s" % (key, value))
else:
    sys.exit(0)
open(path, "w").write("\n".join(lines) + "\n")
print("compose-deps: %s: [%s] %s = %s" % (path, section, key, value), file=sys.stderr)
PY
}
conf_set containers default_ulimits '[]'
conf_set network network_backend '"netavark"'
conf_set engine runtime '"runc"'
