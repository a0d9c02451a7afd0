# shellcheck shell=bash
# timeout: 420
# Directory listings (--autoindex): off by default; HTML and JSON over
# HTTP/1.1 and HTTP/2, chosen by Accept's q or ?format=json; names of any
# bytes listed so that following each link gives back that very file;
# dotfiles, symlinks out of the root, FIFOs and sockets left out; and a
# folder of 100,000 entries listed off the worker's thread: the worker's
# other connections and the connection's other streams are answered while
# it is made, and clients that leave meanwhile leave the server healthy.

AI="$(dirname "${BASH_SOURCE[0]}")/autoindex_client.py"
R=$T/root

# The tree: special/ holds a file per awkward name, each file holding its
# own name's bytes (names.hex: the files' names, sorted as listed).
"$PY" - "$R" "$WORK" "$T/names.hex" <<'EOF'
import os, socket, sys
root, work, out = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), sys.argv[3]
sp = os.path.join(root, b"special")
os.makedirs(os.path.join(sp, b"subdir"))
os.makedirs(os.path.join(root, b"targets"))
os.makedirs(os.path.join(root, b"withindex"))
os.makedirs(os.path.join(root, b"big"))
names = [b"a b.txt", b'q"uote', b"<lt>&amp;", b"100%", b"what?x=1", b"hash#tag",
         b"caf\xc3\xa9", b"bad\xff\xfe", b"new\nline", b"single'q", b"back\\slash",
         b"colon:x", b"semi;x", b"plus+", b"%2e%2e", b"\xf0\x9f\x98\x80", b"<script>x"]
for n in names:
    with open(os.path.join(sp, n), "wb") as f:
        f.write(n)
with open(os.path.join(sp, b"subdir", b"x"), "wb") as f:
    f.write(b"x")
with open(os.path.join(sp, b".hidden"), "wb") as f:
    f.write(b".hidden")
with open(os.path.join(root, b"targets", b"link-in"), "wb") as f:
    f.write(b"link-in")
os.symlink(b"../targets/link-in", os.path.join(sp, b"link-in"))
os.symlink(os.path.join(work, b"outside.txt"), os.path.join(sp, b"link-out"))
os.symlink(os.path.join(work, b"outside-dir"), os.path.join(sp, b"dir-out"))
os.symlink(b"nowhere", os.path.join(sp, b"dangling"))
os.mkfifo(os.path.join(sp, b"fifo"))
s = socket.socket(socket.AF_UNIX)
s.bind(os.path.join(sp, b"sock"))
with open(os.path.join(root, b"withindex", b"index.html"), "wb") as f:
    f.write(b"WITHINDEX\n")
with open(os.path.join(root, b"small.txt"), "wb") as f:
    f.write(b"small\n")
big = os.path.join(root, b"big")
for i in range(100000):
    os.close(os.open(os.path.join(big, b"f%06d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
with open(out, "w") as f:
    f.write(" ".join(n.hex() for n in sorted(names + [b"link-in"])))
EOF
check "the test tree is made" test -f "$T/names.hex"

# start_ai ARGS...: as start_ktlsd, on the tree above, one worker.
start_ai() {
	start_on_free_port --root "$R" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 1 "$@"
}

# line KEY: the words after KEY on the line of $PY_OUT that starts with it.
line() {
	sed -n "s/^$1 //p" "$PY_OUT" | head -n1
}

# ---- off by default: as before ----
start_ai || return 0
fetch off /special/
expect_eq "off by default: a folder without index.html is 404" "$STATUS" 404
fetch off-json '/special/?format=json' -H 'Accept: application/json'
expect_eq "off by default: no JSON listing either" "$STATUS" 404
fetch off-index /withindex/
expect_eq "off: index.html still served" "$STATUS $(cat "$T/off-index.b")" "200 WITHINDEX"
stop_ktlsd

# ---- on ----
start_ai --autoindex on || return 0
CA=(--cacert "$FIX/ca.pem" --resolve "localhost:$PORT:127.0.0.1")

for proto in --http1.1 --http2; do
	p=${proto#--}
	py_client 100 "$AI" roundtrip "$proto" "$BASE" special "$R" "${CA[@]}"
	expect_eq "$p: every name's link gives back its file (JSON names match)" "$(line ROUNDTRIP)" ok
	expect_eq "$p: the HTML shows the same links and names, in order" "$(line HTML_SAME)" yes
	expect_eq "$p: 17 names, a folder and a symlink in; nothing else" "$(line ENTRIES)" 19
	expect_eq "$p: the files, bytewise sorted, as made" \
		"$(sed -n 's/^NAME //p' "$PY_OUT" | tr '\n' ' ' | sed 's/ $//')" "$(cat "$T/names.hex")"
done

KCURL_HTTP=--http1.1
fetch html /special/
expect_eq "HTML: 200" "$STATUS" 200
expect_eq "HTML: Content-Type" "$(hdr "$T/html.h" Content-Type)" "text/html; charset=utf-8"
expect_eq "HTML: Vary: Accept" "$(hdr "$T/html.h" Vary)" Accept
expect_eq "HTML: Cache-Control" "$(hdr "$T/html.h" Cache-Control)" no-cache
expect_eq "HTML: Content-Length is the body's" "$(hdr "$T/html.h" Content-Length)" "$(size "$T/html.b")"
expect_eq "HTML: no ETag (made afresh each time)" "$(hdr_count "$T/html.h" ETag)" 0
check "HTML: a link up" grep -qF '<a href="../">../</a>' "$T/html.b"
check "HTML: the folder, with its slash" grep -qF '<a href="subdir/">subdir/</a>' "$T/html.b"
check "HTML: a name is escaped" grep -qF '<a href="%3Cscript%3Ex">&lt;script&gt;x</a>' "$T/html.b"
expect_file_lacks "HTML: no script" "$T/html.b" "<script"
fetch json /special/ -H 'Accept: application/json'
expect_eq "Accept: application/json gives JSON" "$(hdr "$T/json.h" Content-Type)" application/json
expect_eq "JSON: Vary: Accept" "$(hdr "$T/json.h" Vary)" Accept
check "JSON: it parses" "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/json.b"
fetch pref /special/ -H 'Accept: text/html, application/json;q=0.9'
expect_eq "Accept: text/html, application/json;q=0.9 prefers HTML" \
	"$(hdr "$T/pref.h" Content-Type)" "text/html; charset=utf-8"
fetch sub /special/ -H 'Accept: application/jsonx'
expect_eq "Accept: application/jsonx is not JSON" "$(hdr "$T/sub.h" Content-Type)" \
	"text/html; charset=utf-8"
fetch q '/special/?format=json' -H 'Accept: text/html'
expect_eq "?format=json gives JSON whatever Accept says" "$(hdr "$T/q.h" Content-Type)" application/json
check "?format=json: the same listing" cmp -s "$T/q.b" "$T/json.b"
fetch root '/?format=json'
check "the root is listed" grep -qF '"href":"special/"' "$T/root.b"
expect_file_lacks "the root has no link up" "$T/root.b" '../'
for what in .hidden link-out dir-out dangling fifo sock outside; do
	expect_file_lacks "JSON: no $what" "$T/json.b" "$what"
	expect_file_lacks "HTML: no $what" "$T/html.b" "$what"
done
check "a symlink in the root is listed with its target's size" grep -qF \
	'{"name":"link-in","href":"link-in","type":"file","size":7,' "$T/json.b"
fetch head /special/ -I
expect_eq "HEAD: 200 with GET's length" "$STATUS $(hdr "$T/head.h" Content-Length)" \
	"200 $(size "$T/html.b")"
# A GET pipelined behind the HEAD: a stray body byte would break its status line.
raw 'send=HEAD /special/ HTTP/1.1\r\nHost: localhost\r\n\r\nGET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' \
	resp-head resp close=1
expect_eq "HEAD on the wire: no body byte, and the request behind it answered" \
	"$(raw_summary)" "RESP 200 0 RESP 200 6 OPEN"
fetch range /special/ -H 'Range: bytes=0-9'
expect_eq "Range on a listing is ignored: 200, all of it" "$STATUS $(size "$T/range.b")" \
	"200 $(size "$T/html.b")"
fetch idx /withindex/
expect_eq "index.html still wins" "$STATUS $(cat "$T/idx.b")" "200 WITHINDEX"
fetch noslash /special
expect_eq "without the slash: 301 to it" "$STATUS $(hdr "$T/noslash.h" Location)" "301 /special/"
fetch dot /special/.hidden
expect_eq "a dotfile listed nowhere is not served either" "$STATUS" 404

KCURL_HTTP=--http2
fetch h2json '/special/?format=json'
expect_eq "HTTP/2: JSON, the same bytes" "$STATUS $(hdr "$T/h2json.h" Content-Type)" "200 application/json"
check "HTTP/2: the same listing as HTTP/1.1" cmp -s "$T/h2json.b" "$T/json.b"
py_client 30 "$(dirname "${BASH_SOURCE[0]}")/h2_client.py" get --method HEAD "$PORT" /special/
expect_match "HTTP/2 HEAD: 200, no body" "$(line STREAM)" '^1 /special/ status=200 bytes=0 '
KCURL_HTTP=--http1.1

# 100,000 entries, four pipelined requests for them on one connection: the
# small file on another connection of the same (only) worker is answered
# while they are made, and the pipelined ones come back in order.
py_client 110 "$AI" pipeline "$PORT" 4 '/big/?format=json' /small.txt
expect_eq "100,000 entries: the other connection's small file" "$(line SMALL)" "200 6"
expect_eq "100,000 entries: four pipelined listings" "$(line LISTS)" "200,200,200,200"
expect_eq "100,000 entries: all of them in the JSON" "$(line ENTRIES)" 100000
expect_eq "100,000 entries: the small file came before the listings were done" \
	"$(line SMALL_FIRST)" yes

# HTTP/2: two big listings and a small file on one connection: the small
# file's stream (5) ends first.
py_client 110 "$(dirname "${BASH_SOURCE[0]}")/h2_client.py" get "$PORT" \
	'/big/?format=json' '/big/?format=json' /small.txt
expect_eq "HTTP/2: all three streams end" "$(tail -n1 "$PY_OUT")" DONE
expect_match "HTTP/2: the small file's stream ends first" "$(line ORDER)" '^5,'
expect_eq "HTTP/2: all three 200" "$(grep -c 'status=200' "$PY_OUT")" 3

# Clients that go while their listing is made.
for i in 1 2 3; do
	py_client 20 "$AI" h1-drop "$PORT" '/big/?format=json'
	py_client 20 "$AI" h2-drop "$PORT" '/big/?format=json'
done
expect_eq "dropped clients: sent and gone" "$OUT" DROPPED
# Streams reset while their listings are made, on a connection that stays.
py_client 30 "$(dirname "${BASH_SOURCE[0]}")/h2_client.py" rst-flood "$PORT" 4 '/big/?format=json' 2
expect_eq "HTTP/2 streams reset mid-listing: the connection stays" "$(tail -n1 "$PY_OUT")" OPEN
fetch after /small.txt
expect_eq "after clients left mid-listing: still serving" "$STATUS $(cat "$T/after.b")" "200 small"
fetch after-big '/big/?format=json'
expect_eq "after clients left mid-listing: still listing" "$STATUS" 200
check "the server is alive" kill -0 "$KTLSD_PID"

# More listings at once than a worker queues (16): the rest get 503 at once,
# the others their listing (HEAD: no need to carry the bodies). The 16 are
# made one after another: 12 s under ASan on an idle machine, over the
# client's default 30 s on a loaded one, so it waits longer.
paths=()
for i in $(seq 24); do paths+=('/big/?format=json'); done
py_client 110 "$(dirname "${BASH_SOURCE[0]}")/h2_client.py" get --method HEAD --timeout 100 "$PORT" "${paths[@]}"
expect_eq "24 listings at once: every stream ends" "$(tail -n1 "$PY_OUT")" DONE
expect_eq "24 listings at once: each 200 or 503" \
	"$(grep -c -E '^STREAM .* status=(200|503) ' "$PY_OUT")" 24
check "24 listings at once: over the queue, 503" grep -qE '^STREAM .* status=503 ' "$PY_OUT"

# SIGTERM with a listing under way: it is finished and sent, then the exit.
timeout 110 "$PY" "$AI" term "$PORT" /small.txt '/big/?format=json' >"$T/term.out" 2>&1 &
term_pid=$!
check "SIGTERM mid-listing: the listing is asked for" wait_until 60 grep -q READY "$T/term.out"
stop_ktlsd
wait "$term_pid"
expect_eq "SIGTERM mid-listing: the listing still arrives, whole" \
	"$(sed -n 's/^LIST //p' "$T/term.out")" "200 100000"

# ---- --dotfiles on: listed as they are served ----
start_ai --autoindex on --dotfiles on || return 0
fetch dots '/special/?format=json'
check "--dotfiles on: .hidden listed" grep -qF '"name":".hidden"' "$T/dots.b"
fetch dotget /special/.hidden
expect_eq "--dotfiles on: and served" "$STATUS $(cat "$T/dotget.b")" "200 .hidden"
expect_file_lacks "--dotfiles on: still no link out of the root" "$T/dots.b" link-out
stop_ktlsd

# ---- a site's Cache-Control replaces the listing's no-cache: one field ----
start_ai --autoindex on --header "Cache-Control: public, max-age=60" || return 0
for v in --http1.1 --http2; do
	KCURL_HTTP=$v fetch cc /special/
	expect_eq "--header Cache-Control ($v): the listing has one Cache-Control, the site's" \
		"$STATUS $(hdr_count "$T/cc.h" Cache-Control) $(hdr "$T/cc.h" Cache-Control)" \
		"200 1 public, max-age=60"
done
KCURL_HTTP=--http1.1
stop_ktlsd

# ---- a folder over --autoindex-max-entries: 500, one line, no re-read -------
mkdir -p "$R/many"
for i in $(seq 1 30); do : >"$R/many/f$i"; done
start_ai --autoindex on --autoindex-max-entries 20 || return 0
for v in --http1.1 --http2 --http1.1; do
	KCURL_HTTP=$v fetch many /many/
	expect_eq "30 entries over a limit of 20 ($v): 500" "$STATUS" 500
done
KCURL_HTTP=--http1.1
wait_until 10 grep -q '/many: more than 20 entries' "$KTLSD_LOG"
expect_eq "... one warning for the three (unchanged: not read again)" \
	"$(grep -c '/many: more than 20 entries (--autoindex-max-entries); not listed (500)' "$KTLSD_LOG")" 1
: >"$R/many/f31"
touch -d '+1 minute' "$R/many" # a second entry in the same tick must change it too
fetch many /many/
expect_eq "an entry more: still 500" "$STATUS" 500
wait_until 10 sh -c '[ "$(grep -c "/many: more than 20 entries" "$1")" -ge 2 ]' sh "$KTLSD_LOG"
expect_eq "... read again (a second warning)" "$(grep -c '/many: more than 20 entries' "$KTLSD_LOG")" 2
fetch few '/sub/'
expect_in "a smaller folder beside it is listed as before" "$STATUS" 200 404
stop_ktlsd
start_ai --autoindex on --autoindex-max-entries 31 || return 0
fetch many '/many/?format=json'
expect_eq "31 entries under a limit of 31: listed" \
	"$STATUS $(grep -o '"name":"f[0-9]*"' "$T/many.b" | wc -l)" "200 31"
stop_ktlsd
rm -rf "$R/many"
