#!/usr/bin/env bash
# real-sites.sh: real documentation sites nobody here wrote, each made by a
# different generator, served with a private nginx on loopback. Sourced by
# the benches that crawl them (noise-real.sh, wget-reach.sh); run alone it
# serves them until Ctrl-C:
#
#   bash bench/real-sites.sh            # install, serve, print NAME URL lines
#
# Functions after sourcing:
#   real_sites_install        apt-get the Debian packages that are missing
#   real_sites_start [DIR]    nginx on 127.0.3.N:8090 (config, pid and logs
#                             in DIR, default /tmp/real-sites); 1 on failure
#   real_sites_stop
#   REAL_SITES                "name url" lines, one per site
#   bigpages_start DIR IP PORT  tests/e2e/bigpages.py's site (a 3 MB and a
#                             9 MB index page) generated in DIR/site and
#                             served by an nginx of its own on IP:PORT
#   bigpages_stop DIR
#
# Sites (package, generator): python (python3.11-doc, Sphinx), postgres
# (postgresql-doc-15, DocBook XSL), javadoc (libcommons-lang3-java-doc,
# Javadoc 17), doxygen (libsdl2-doc, Doxygen; seeded at its file list, as
# its main page builds its menus in JavaScript and holds one link), glib
# (libglib2.0-doc, gtk-doc), rustdoc (cargo-doc, rustdoc: the syn crate),
# mkdocs (mkdocs-doc, MkDocs), git (git-doc, AsciiDoc), erlang (erlang-doc,
# erl_docgen: guides and chapters linked only from side menus), mdbook
# (rust-doc, mdBook: The Rust Programming Language, chapters linked only
# from its sidebar; the package is 500 MB with the std docs), apache
# (apache2-doc, httpd's XSLT: its language folders hold the English pages'
# byte-identical copies, whose relative links lead into their own folder),
# magick (imagemagick-6-doc, PHP-made pages with an XHTML-style <iframe
# .../> in the menu bar, which HTML reads as swallowing the page), linux
# (linux-doc-6.1, Sphinx's Read the Docs theme: 3,000 pages, a sidebar of
# the whole tree), scipy and pandas (python-scipy-doc, python-pandas-doc:
# pydata-sphinx-theme, whose top bar is the only way to the release notes
# and whose tables of a class's methods look like the sidebar's URLs).
REAL_SITES_PKGS=(python3.11-doc postgresql-doc-15 libcommons-lang3-java-doc
    libsdl2-doc libglib2.0-doc cargo-doc mkdocs-doc git-doc erlang-doc
    rust-doc apache2-doc imagemagick-6-doc linux-doc-6.1 python-scipy-doc
    python-pandas-doc nginx-light)
# name ip root seed-path
REAL_SITES_TABLE="
python 127.0.3.1 /usr/share/doc/python3.11/html /
postgres 127.0.3.2 /usr/share/doc/postgresql-doc-15/html /
javadoc 127.0.3.3 /usr/share/doc/libcommons-lang3-java/api /
doxygen 127.0.3.4 /usr/share/doc/libsdl2-doc/html /files.html
glib 127.0.3.5 /usr/share/gtk-doc/html/glib /
rustdoc 127.0.3.6 /usr/share/doc/cargo/doc /syn/index.html
mkdocs 127.0.3.7 /usr/share/doc/mkdocs/html /
git 127.0.3.8 /usr/share/doc/git-doc /
erlang 127.0.3.9 /usr/share/doc/erlang-doc /doc/index.html
mdbook 127.0.3.10 /usr/share/doc/rust-doc/html/book /index.html
apache 127.0.3.11 /usr/share/doc/apache2-doc/manual /en/index.html
magick 127.0.3.12 /usr/share/doc/imagemagick-6-common/html /index.html
linux 127.0.3.13 /usr/share/doc/linux-doc-6.1/html /index.html
scipy 127.0.3.14 /usr/share/doc/python-scipy-doc/html /index.html
pandas 127.0.3.15 /usr/share/doc/python-pandas-doc/html /index.html
"
REAL_SITES_PORT=8090
REAL_SITES=$(echo "$REAL_SITES_TABLE" | awk -v p=$REAL_SITES_PORT \
    'NF == 4 { printf "%s http://%s:%s%s\n", $1, $2, p, $4 }')

real_sites_install() {
    local missing=() p sudo=
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    for p in "${REAL_SITES_PKGS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "real-sites: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}

real_sites_start() {
    REAL_SITES_DIR=${1:-/tmp/real-sites}
    local servers
    real_sites_install || return 1
    rm -rf "$REAL_SITES_DIR"; mkdir -p "$REAL_SITES_DIR/tmp"
    servers=$(echo "$REAL_SITES_TABLE" | awk -v p=$REAL_SITES_PORT 'NF == 4 {
        cmd = "readlink -f " $3; cmd | getline root; close(cmd)
        printf "  server { listen %s:%s; root %s; index index.html; }\n", $2, p, root }')
    cat >"$REAL_SITES_DIR/nginx.conf" <<CONF
worker_processes 2;
pid $REAL_SITES_DIR/nginx.pid;
error_log $REAL_SITES_DIR/error.log;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $REAL_SITES_DIR/tmp; proxy_temp_path $REAL_SITES_DIR/tmp;
  fastcgi_temp_path $REAL_SITES_DIR/tmp; uwsgi_temp_path $REAL_SITES_DIR/tmp;
  scgi_temp_path $REAL_SITES_DIR/tmp;
$servers
}
CONF
    nginx -c "$REAL_SITES_DIR/nginx.conf" -p "$REAL_SITES_DIR"
}

real_sites_stop() {
    [ -n "${REAL_SITES_DIR:-}" ] && [ -f "$REAL_SITES_DIR/nginx.pid" ] &&
        kill "$(cat "$REAL_SITES_DIR/nginx.pid")" 2>/dev/null
    return 0
}

bigpages_start() {
    local d=$1 ip=$2 port=$3 src
    src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    mkdir -p "$d/nginx/tmp"
    python3 "$src/tests/e2e/bigpages.py" --out "$d/site" --host "$ip" --port "$port" || return 1
    local t=$d/nginx/tmp
    cat >"$d/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $d/nginx/nginx.pid;
error_log $d/nginx/error.log;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $t; proxy_temp_path $t; fastcgi_temp_path $t;
  uwsgi_temp_path $t; scgi_temp_path $t;
  server { listen $ip:$port; root $d/site/hosts/$ip; index index.html; }
}
CONF
    nginx -c "$d/nginx/nginx.conf" -p "$d/nginx"
}

bigpages_stop() {
    [ -f "$1/nginx/nginx.pid" ] && kill "$(cat "$1/nginx/nginx.pid")" 2>/dev/null
    return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    real_sites_start "${1:-}" || exit 1
    trap real_sites_stop EXIT INT TERM
    echo "$REAL_SITES"
    echo "serving; Ctrl-C stops" >&2
    while sleep 3600; do :; done
fi
