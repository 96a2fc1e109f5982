# site-gen.sh, sourced by the benchmark scripts (needs $SHARED):
# site_gen SITE ARGS... writes the gen_site.py site with ARGS into SITE,
# unless SITE/.params says it was made with the same ARGS by the same
# gen_site.py (the site is kept between runs).
site_gen() {
    local site=$1 params
    shift
    params="$* gen=$(sha1sum "$SHARED/bench/gen_site.py" | cut -c1-12)"
    if [ "$(cat "$site/.params" 2>/dev/null)" != "$params" ]; then
        rm -rf "$site"
        python3 "$SHARED/bench/gen_site.py" --out "$site" "$@" >/dev/null
        echo "$params" >"$site/.params"
    fi
}
