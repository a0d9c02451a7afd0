# shellcheck shell=bash
# The open-file cache keeps folders and missing names (server/core/filecache.c),
# revalidated as files are: a name asked for again costs no open, and a
# file created after its 404, a folder's index.html added or removed, a
# precompressed sidecar put beside its file, are all seen within the
# cache's second (waited for up to 10 s on a loaded machine), with curl
# over HTTP/1.1 and HTTP/2.

root=$T/root
mkdir -p "$root/docs"
echo "plain text" >"$root/a.txt"
echo "<p>docs</p>" >"$root/docs/index.html"

# status_is CODE PATH [CURL-ARGS...]: GET PATH answers CODE.
status_is() {
	local code=$1 path=$2
	shift 2
	test "$(kcurl -o /dev/null -w '%{http_code}' "$@" "$BASE$path")" = "$code"
}
# body_is TEXT PATH [CURL-ARGS...]: GET PATH answers TEXT (one line).
body_is() {
	local text=$1 path=$2
	shift 2
	test "$(kcurl "$@" "$BASE$path")" = "$text"
}
# coding_is CODING PATH: GET PATH with Accept-Encoding: CODING is sent in it.
coding_is() {
	kcurl -D - -o /dev/null -H "Accept-Encoding: $1" "$BASE$2" | tr -d '\r' |
		grep -qix "content-encoding: $1"
}
# misses: the worker's open-file cache misses, from its exit line.
misses() {
	grep -o 'file_cache_misses=[0-9]*' "$KTLSD_LOG" | cut -d= -f2
}

# ---- a missing name asked again, and a folder, cost one open each -----
start_on_free_port --root "$root" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 || return 0
for i in 1 2 3 4 5 6 7 8 9 10; do kcurl -o /dev/null "$BASE/none.txt"; done
for i in 1 2 3 4 5; do kcurl -o /dev/null "$BASE/docs/"; done
stop_ktlsd
# /none.txt: one; /docs/: the folder and its index.html.
expect_eq "10 requests of a missing file and 5 of a folder: 3 opens" "$(misses)" 3

# ---- revalidated as files are ------------------------------------------
start_on_free_port --root "$root" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 \
	--precompressed on || return 0
for http in --http1.1 --http2; do
	KCURL_HTTP=$http
	rm -f "$root/later.txt" "$root/a.txt.br"
	check "$http: a missing file: 404" status_is 404 /later.txt
	check "$http: ... asked again: 404 (from the cache)" status_is 404 /later.txt
	echo "now here" >"$root/later.txt"
	check "$http: ... created: served within the cache's second" \
		wait_until 10 body_is "now here" /later.txt
	rm "$root/later.txt"
	check "$http: ... removed again: 404 within the cache's second" \
		wait_until 10 status_is 404 /later.txt

	check "$http: a folder with index.html: 200" status_is 200 /docs/
	mv "$root/docs/index.html" "$root/docs/index.off"
	check "$http: ... index.html removed: 404 within the cache's second" \
		wait_until 10 status_is 404 /docs/
	mv "$root/docs/index.off" "$root/docs/index.html"
	check "$http: ... put back: 200 within the cache's second" \
		wait_until 10 status_is 200 /docs/
	check "$http: a folder that does not exist: 404" status_is 404 /newdir/
	mkdir -p "$root/newdir"
	echo "<p>new</p>" >"$root/newdir/index.html"
	check "$http: ... made, with an index.html: 200 within the cache's second" \
		wait_until 10 status_is 200 /newdir/
	rm -r "$root/newdir"

	fetch ident /a.txt -H "Accept-Encoding: br"
	expect_eq "$http: no sidecar: the file itself" "$STATUS $(hdr "$T/ident.h" content-encoding)" "200 "
	printf 'compressed' >"$root/a.txt.br"
	check "$http: ... a.txt.br put beside it: served within the cache's second" \
		wait_until 10 coding_is br /a.txt
done
unset KCURL_HTTP
stop_ktlsd
