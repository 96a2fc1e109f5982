# redis-common.sh: what docker/redis-start.sh and docker/sentinel-start.sh
# share (sourced; in the image it sits next to them in /usr/local/bin).
#   common_password WHO: the first line of the secret file
#     (REDIS_PASSWORD_FILE, default /run/secrets/redis_password) into $pw,
#     quoted for a Redis config file ("..." with \\ and \" escaped); exits 2
#     when the file is missing or empty;
#   common_addrs WHO: this container's addresses (`hostname -I`: its
#     compose network) into $addrs; exits 2 when it has none.
common_password() {
    file=${REDIS_PASSWORD_FILE:-/run/secrets/redis_password}
    if [ ! -f "$file" ] || [ ! -s "$file" ]; then
        echo "$1: no password in $file (run docker/make-secret.sh" \
             "before docker compose up)" >&2
        exit 2
    fi
    pw=$(head -n 1 "$file" | tr -d '\r' | sed 's/\\/\\\\/g; s/"/\\"/g')
}
common_addrs() {
    addrs=$(hostname -I 2>/dev/null || true)
    if [ -z "$addrs" ]; then
        echo "$1: this container has no network address" >&2
        exit 2
    fi
}
