#!/bin/sh
# make-secret.sh: create the Redis password of the compose cluster,
# docker/secrets/redis-password (32 random bytes, base64), unless it
# exists. Run it once before `docker compose up`; the file is ignored by
# git and never part of an image. The redis service requires it
# (requirepass), the node and seed services read it through the compose
# secret redis_password (DCRAWL_REDIS_PASSWORD_FILE), never from their
# command line.
#
# Modes: the directory is 0700 (only you can reach it on this machine);
# the file itself is 0644 because compose mounts it into the containers as
# it is and their users (redis, dcrawl) must be able to read it.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)/secrets
file=$dir/redis-password
mkdir -p "$dir"
chmod 700 "$dir"
if [ -s "$file" ]; then
    echo "make-secret: $file exists, kept"
    exit 0
fi
umask 022
head -c 32 /dev/urandom | base64 | tr -d '\n=' >"$file.tmp"
echo >>"$file.tmp"
mv "$file.tmp" "$file"
echo "make-secret: wrote $file"
