# shellcheck shell=bash
# --precompressed: FILE.br, FILE.zst, FILE.gz served in FILE's place to the
# clients that take them (Accept-Encoding and its q-values), with
# Content-Encoding, FILE's Content-Type, the sidecar's own length, ETag and
# ranges, and Vary: Accept-Encoding; never compressed on the fly. Over
# HTTP/1.1 and HTTP/2, checked with curl and the brotli, zstd and gzip tools.

for tool in brotli zstd gzip; do
	if ! command -v "$tool" >/dev/null; then
		fail "$tool is installed (scripts/install-deps)" "not found"
		return 0
	fi
done

# A root of our own: the shared fixtures are read by other test files at once.
R=$T/root
rm -rf "$R"
mkdir -p "$R/dir" "$R/side.txt.br"
"$PY" -c 'import sys
lines = ["<p>line %d: the quick brown fox jumps over the lazy dog</p>\n" % i for i in range(2000)]
open(sys.argv[1], "w").write("<!doctype html>\n" + "".join(lines))' "$R/page.html"
brotli -k -q 11 "$R/page.html"
zstd -q -k -19 "$R/page.html"
gzip -k -n -9 "$R/page.html"
cp "$R/page.html" "$R/dir/index.html"
brotli -k "$R/dir/index.html"
printf 'only gzip beside me\n' >"$R/only.txt"
gzip -k -n "$R/only.txt"
printf 'no sidecar at all\n' >"$R/plain.txt"
printf 'I am the original\n' >"$R/side.txt"          # side.txt.br is a directory
printf 'stays inside\n' >"$R/esc.txt"
printf 'OUTSIDE THE ROOT\n' >"$T/outside.br"
ln -s "$T/outside.br" "$R/esc.txt.br"                # a sidecar that leaves the root
printf 'a sidecar alone\n' | brotli -c >"$R/lonely.js.br"
printf 'hidden\n' >"$R/.hidden"
brotli -k "$R/.hidden"
# Settled files (an mtime of 2020): a file written in the last two seconds
# has a longer ETag, which would change under the checks below.
find "$R" -type f -exec touch -d @1580608922 {} +

# start ARGS...: ktlsd on our root (as start_ktlsd does for the fixtures).
start() {
	start_on_free_port --root "$R" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 "$@"
}

# ---- --precompressed off (the default): identity, no Vary ---------------------

start || return 0
fetch off /page.html --compressed
expect_eq "off: 200" "$STATUS" 200
expect_eq "off: no Content-Encoding" "$(hdr_count "$T/off.h" Content-Encoding)" 0
expect_eq "off: no Vary" "$(hdr_count "$T/off.h" Vary)" 0
check "off: the original's bytes" cmp -s "$T/off.b" "$R/page.html"
etag_identity=$(hdr "$T/off.h" ETag)
ctype=$(hdr "$T/off.h" Content-Type)
expect_match "off: Content-Type text/html" "$ctype" '^text/html'
stop_ktlsd

# ---- on ---------------------------------------------------------------------

alog=$T/access.log
start --precompressed on --access-log "$alog" || return 0

for KCURL_HTTP in --http1.1 --http2; do
	v=${KCURL_HTTP#--http}

	# curl --compressed asks "deflate, gzip, br, zstd" and decodes.
	fetch "cmp$v" /page.html --compressed
	expect_eq "h$v --compressed: 200" "$STATUS" 200
	expect_eq "h$v --compressed: Content-Encoding br" "$(hdr "$T/cmp$v.h" Content-Encoding)" br
	expect_eq "h$v --compressed: Vary" "$(hdr "$T/cmp$v.h" Vary)" Accept-Encoding
	expect_eq "h$v --compressed: the original's Content-Type" "$(hdr "$T/cmp$v.h" Content-Type)" "$ctype"
	expect_eq "h$v --compressed: Content-Length of the .br" \
		"$(hdr "$T/cmp$v.h" Content-Length)" "$(size "$R/page.html.br")"
	check "h$v --compressed: decodes to the original" cmp -s "$T/cmp$v.b" "$R/page.html"
	etag_br=$(hdr "$T/cmp$v.h" ETag)
	expect_ne "h$v: the .br's ETag is not the original's" "$etag_br" "$etag_identity"
	expect_match "h$v: the .br's ETag names its coding" "$etag_br" '-br"$'

	# Each coding on its own, the raw bytes checked and decoded by its tool.
	fetch "br$v" /page.html -H 'Accept-Encoding: br'
	check "h$v br: the .br file's bytes" cmp -s "$T/br$v.b" "$R/page.html.br"
	brotli -dc "$T/br$v.b" >"$T/br$v.dec" 2>/dev/null
	check "h$v br: brotli -d gives the original" cmp -s "$T/br$v.dec" "$R/page.html"
	fetch "zs$v" /page.html -H 'Accept-Encoding: zstd'
	expect_eq "h$v zstd: Content-Encoding" "$(hdr "$T/zs$v.h" Content-Encoding)" zstd
	check "h$v zstd: the .zst file's bytes" cmp -s "$T/zs$v.b" "$R/page.html.zst"
	zstd -qdc "$T/zs$v.b" >"$T/zs$v.dec" 2>/dev/null
	check "h$v zstd: zstd -d gives the original" cmp -s "$T/zs$v.dec" "$R/page.html"
	fetch "gz$v" /page.html -H 'Accept-Encoding: gzip'
	expect_eq "h$v gzip: Content-Encoding" "$(hdr "$T/gz$v.h" Content-Encoding)" gzip
	expect_eq "h$v gzip: Content-Length of the .gz" "$(hdr "$T/gz$v.h" Content-Length)" \
		"$(size "$R/page.html.gz")"
	gzip -dc "$T/gz$v.b" >"$T/gz$v.dec" 2>/dev/null
	check "h$v gzip: gzip -d gives the original" cmp -s "$T/gz$v.dec" "$R/page.html"
	etag_gz=$(hdr "$T/gz$v.h" ETag)
	expect_ne "h$v: the .gz's ETag is its own" "$etag_gz" "$etag_br"

	# q-values pick; ties go br, zstd, gzip; identity is served when nothing fits.
	for c in 'br;q=0.5, gzip;q=0.8, zstd;q=0.1|gzip' 'br;q=0, *|zstd' 'GZIP, Br|br' \
		'x-gzip|gzip' 'gzip;q=0.9, zstd;q=0.9|zstd' ' br ; q=0.4 ,gzip;q=0.3|br' \
		'identity;q=1, br;q=0.5|' 'br;q=2|' 'br;level=5|' '*;q=0|' 'identity;q=0|' \
		'identity;q=0, *;q=0|' 'deflate, compress|' ', ,|'; do
		ae=${c%|*} want=${c#*|}
		fetch "q$v" /page.html -H "Accept-Encoding: $ae"
		expect_eq "h$v Accept-Encoding '$ae': 200" "$STATUS" 200
		expect_eq "h$v Accept-Encoding '$ae': Content-Encoding '$want'" \
			"$(hdr "$T/q$v.h" Content-Encoding)" "$want"
		expect_eq "h$v Accept-Encoding '$ae': Vary" "$(hdr "$T/q$v.h" Vary)" Accept-Encoding
		if [ -z "$want" ]; then
			check "h$v Accept-Encoding '$ae': the original's bytes" cmp -s "$T/q$v.b" "$R/page.html"
		fi
	done
	fetch "empty$v" /page.html -H 'Accept-Encoding;'
	expect_eq "h$v an empty Accept-Encoding: identity" "$(hdr_count "$T/empty$v.h" Content-Encoding)" 0
	fetch "none$v" /page.html -H 'Accept-Encoding:'
	expect_eq "h$v no Accept-Encoding: identity" "$(hdr_count "$T/none$v.h" Content-Encoding)" 0
	expect_eq "h$v no Accept-Encoding: Vary all the same" "$(hdr "$T/none$v.h" Vary)" Accept-Encoding
	expect_eq "h$v no Accept-Encoding: the original's ETag" "$(hdr "$T/none$v.h" ETag)" "$etag_identity"
	# Two fields make one list: the q=0 of the first still counts.
	fetch "two$v" /page.html -H 'Accept-Encoding: br;q=0' -H 'Accept-Encoding: gzip'
	expect_eq "h$v two Accept-Encoding fields: joined" "$(hdr "$T/two$v.h" Content-Encoding)" gzip
	# A very long field: many members, the last one decides.
	long=$(printf 'deflate;q=0.1, %.0s' $(seq 300))zstd
	fetch "long$v" /page.html -H "Accept-Encoding: $long"
	expect_eq "h$v a 4.5 KB Accept-Encoding: zstd" "$(hdr "$T/long$v.h" Content-Encoding)" zstd

	# Ranges are over the sidecar's bytes.
	brsize=$(size "$R/page.html.br")
	fetch "rng$v" /page.html -H 'Accept-Encoding: br' -H 'Range: bytes=10-109'
	expect_eq "h$v range of the .br: 206" "$STATUS" 206
	expect_eq "h$v range of the .br: Content-Range" "$(hdr "$T/rng$v.h" Content-Range)" \
		"bytes 10-109/$brsize"
	expect_eq "h$v range of the .br: Content-Encoding" "$(hdr "$T/rng$v.h" Content-Encoding)" br
	tail -c +11 "$R/page.html.br" | head -c 100 >"$T/rng.want"
	check "h$v range of the .br: its bytes 10-109" cmp -s "$T/rng$v.b" "$T/rng.want"
	fetch "ir$v" /page.html -H 'Accept-Encoding: br' -H 'Range: bytes=-20' -H "If-Range: $etag_br"
	expect_eq "h$v If-Range with the .br's ETag: 206" "$STATUS" 206
	fetch "ir2$v" /page.html -H 'Accept-Encoding: br' -H 'Range: bytes=-20' -H "If-Range: $etag_identity"
	expect_eq "h$v If-Range with the original's ETag: 200, the whole .br" "$STATUS" 200
	check "h$v If-Range with the original's ETag: the .br's bytes" cmp -s "$T/ir2$v.b" "$R/page.html.br"

	# Conditionals compare with what would be sent.
	fetch "inm$v" /page.html -H 'Accept-Encoding: br' -H "If-None-Match: $etag_br"
	expect_eq "h$v If-None-Match the .br's ETag: 304" "$STATUS" 304
	expect_eq "h$v 304: Vary" "$(hdr "$T/inm$v.h" Vary)" Accept-Encoding
	expect_eq "h$v 304: the .br's ETag" "$(hdr "$T/inm$v.h" ETag)" "$etag_br"
	fetch "inm2$v" /page.html -H "If-None-Match: $etag_br"
	expect_eq "h$v the .br's ETag, identity asked: 200" "$STATUS" 200
	check "h$v the .br's ETag, identity asked: the original" cmp -s "$T/inm2$v.b" "$R/page.html"
	fetch "inm3$v" /page.html -H 'Accept-Encoding: gzip' -H "If-None-Match: $etag_br"
	expect_eq "h$v the .br's ETag, gzip asked: 200" "$STATUS" 200

	fetch "head$v" /page.html -I -H 'Accept-Encoding: zstd'
	expect_eq "h$v HEAD: 200" "$STATUS" 200
	expect_eq "h$v HEAD: Content-Encoding" "$(hdr "$T/head$v.h" Content-Encoding)" zstd
	expect_eq "h$v HEAD: Content-Length of the .zst" "$(hdr "$T/head$v.h" Content-Length)" \
		"$(size "$R/page.html.zst")"

	# A directory's index.html, and files with some sidecars or none.
	fetch "dir$v" /dir/ -H 'Accept-Encoding: gzip, br'
	expect_eq "h$v dir/: index.html.br" "$(hdr "$T/dir$v.h" Content-Encoding)" br
	expect_eq "h$v dir/: text/html" "$(hdr "$T/dir$v.h" Content-Type)" "$ctype"
	check "h$v dir/: the .br's bytes" cmp -s "$T/dir$v.b" "$R/dir/index.html.br"
	fetch "only$v" /only.txt -H 'Accept-Encoding: br, zstd'
	expect_eq "h$v only a .gz, br or zstd asked: identity" "$(hdr_count "$T/only$v.h" Content-Encoding)" 0
	check "h$v only a .gz, br or zstd asked: the original" cmp -s "$T/only$v.b" "$R/only.txt"
	fetch "only2$v" /only.txt -H 'Accept-Encoding: br, zstd, gzip'
	expect_eq "h$v only a .gz, gzip taken: gzip" "$(hdr "$T/only2$v.h" Content-Encoding)" gzip
	fetch "plain$v" /plain.txt --compressed
	expect_eq "h$v no sidecar: identity" "$(hdr_count "$T/plain$v.h" Content-Encoding)" 0
	expect_eq "h$v no sidecar: Vary all the same" "$(hdr "$T/plain$v.h" Vary)" Accept-Encoding
	check "h$v no sidecar: the original" cmp -s "$T/plain$v.b" "$R/plain.txt"

	# What is passed over or refused.
	fetch "lonely$v" /lonely.js -H 'Accept-Encoding: br'
	expect_eq "h$v a .br without its original: 404" "$STATUS" 404
	expect_eq "h$v a 404 does not vary" "$(hdr_count "$T/lonely$v.h" Vary)" 0
	fetch "self$v" /lonely.js.br -H 'Accept-Encoding: br'
	expect_eq "h$v a .br asked by its own name: 200" "$STATUS" 200
	expect_eq "h$v a .br asked by its own name: no Content-Encoding" \
		"$(hdr_count "$T/self$v.h" Content-Encoding)" 0
	fetch "side$v" /side.txt -H 'Accept-Encoding: br'
	expect_eq "h$v a .br that is a directory: passed over" "$(hdr_count "$T/side$v.h" Content-Encoding)" 0
	check "h$v a .br that is a directory: the original" cmp -s "$T/side$v.b" "$R/side.txt"
	fetch "esc$v" /esc.txt -H 'Accept-Encoding: br'
	expect_eq "h$v a .br leaving the root: 200" "$STATUS" 200
	expect_eq "h$v a .br leaving the root: passed over" "$(hdr_count "$T/esc$v.h" Content-Encoding)" 0
	check "h$v a .br leaving the root: the original" cmp -s "$T/esc$v.b" "$R/esc.txt"
	expect_file_lacks "h$v a .br leaving the root: nothing from outside" "$T/esc$v.b" OUTSIDE
	fetch "hid$v" /.hidden -H 'Accept-Encoding: br'
	expect_eq "h$v a dotfile's .br: 404" "$STATUS" 404
done

# The access log says which coding went out.
stop_ktlsd
expect_match "access log: enc=br on HTTP/1.1" "$(grep -a '"GET /page.html HTTP/1.1" 200' "$alog")" \
	' body=[a-z]+ enc=br site='
expect_match "access log: enc=gzip on HTTP/2" "$(grep -a '"GET /page.html HTTP/2.0" 200' "$alog")" \
	' body=[a-z]+ enc=gzip site='
expect_eq "access log: enc=- for identity (every line has the field)" \
	"$(grep -a '"GET /plain.txt HTTP/1.1"' "$alog" | grep -vc ' enc=- site=')" 0
