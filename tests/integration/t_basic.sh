# shellcheck shell=bash
# Plain static-file serving: status, headers, content types, methods,
# directories, dotfiles; with curl, wget and a raw socket.

start_ktlsd || return 0

fetch index /
expect_eq "GET / status" "$STATUS" 200
check "GET / body is index.html" cmp -s "$T/index.b" "$FIX/root/index.html"
expect_match "GET / Content-Type text/html" "$(hdr "$T/index.h" Content-Type)" '^text/html(;|$)'
expect_eq "GET / Content-Length" "$(hdr "$T/index.h" Content-Length)" "$(size "$FIX/root/index.html")"

fetch text /text.txt
expect_eq "GET /text.txt status" "$STATUS" 200
check "GET /text.txt body" cmp -s "$T/text.b" "$FIX/root/text.txt"
expect_eq "GET /text.txt Content-Length" "$(hdr "$T/text.h" Content-Length)" "$(size "$FIX/root/text.txt")"
expect_match "GET /text.txt Content-Type" "$(hdr "$T/text.h" Content-Type)" '^text/plain(;|$)'
expect_match "ETag present" "$(hdr "$T/text.h" ETag)" '^(W/)?"[^"]+"$'
expect_match "Last-Modified is an HTTP date" "$(hdr "$T/text.h" Last-Modified)" \
	'^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$'
want_lm=$(TZ=GMT date -r "$FIX/root/text.txt" '+%a, %d %b %Y %H:%M:%S GMT')
expect_eq "Last-Modified is the file's mtime" "$(hdr "$T/text.h" Last-Modified)" "$want_lm"
expect_eq "Accept-Ranges: bytes" "$(hdr "$T/text.h" Accept-Ranges)" bytes
expect_match "Date present" "$(hdr "$T/text.h" Date)" ' GMT$'
expect_ne "Server present" "$(hdr "$T/text.h" Server)" ""
expect_eq "one Content-Length header" "$(hdr_count "$T/text.h" Content-Length)" 1

# HEAD: the same headers, and not one byte of body (checked on the wire).
fetch head /text.txt -I
expect_eq "HEAD status" "$STATUS" 200
expect_eq "HEAD Content-Length is the file size" "$(hdr "$T/head.h" Content-Length)" "$(size "$FIX/root/text.txt")"
expect_eq "HEAD ETag equals GET ETag" "$(hdr "$T/head.h" ETag)" "$(hdr "$T/text.h" ETag)"
# A GET pipelined behind the HEAD: a stray body byte would break its status line.
raw 'send=HEAD /text.txt HTTP/1.1\r\nHost: localhost\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' \
	resp-head resp
expect_eq "HEAD on the wire: headers and not one body byte" "$(raw_summary)" "RESP 200 0 RESP 200 $(size "$FIX/root/a.txt")"

for f in style.css:text/css app.js:'(text|application)/javascript' data.json:application/json \
	image.png:image/png file.unknownext:application/octet-stream; do
	name=${f%%:*}
	want=${f#*:}
	fetch ct "/$name"
	expect_eq "GET /$name status" "$STATUS" 200
	expect_match "Content-Type of .${name##*.}" "$(hdr "$T/ct.h" Content-Type)" "^$want(;|\$)"
done

fetch missing /no-such-file.txt
expect_eq "missing file 404" "$STATUS" 404
fetch missing2 /sub/no/such/file
expect_eq "missing nested file 404" "$STATUS" 404

for m in POST PUT DELETE PATCH; do
	fetch method /text.txt -X "$m" --data-binary x
	expect_eq "$m status 405" "$STATUS" 405
	expect_match "$m Allow: GET, HEAD" "$(hdr "$T/method.h" Allow)" '^GET, ?HEAD$'
done
fetch options /text.txt -X OPTIONS
expect_in "OPTIONS not served as GET (405/501)" "$STATUS" 405 501

fetch dir /sub
expect_eq "directory without slash: 301" "$STATUS" 301
expect_match "directory without slash: Location ends in /sub/" "$(hdr "$T/dir.h" Location)" '/sub/$'
fetch dirq '/sub?x=1'
expect_eq "directory without slash and a query: 301" "$STATUS" 301
fetch subindex /sub/
expect_eq "subdirectory index status" "$STATUS" 200
check "subdirectory index.html served" cmp -s "$T/subindex.b" "$FIX/root/sub/index.html"
fetch subindex2 /sub/index.html
expect_eq "subdirectory index.html by name" "$STATUS" 200

fetch noindex /noindex/
expect_in "directory without index: 403 or 404" "$STATUS" 403 404
expect_file_lacks "directory without index: no listing" "$T/noindex.b" LISTING-CANARY
noindex_status=$STATUS
fetch noindex2 /noindex
expect_in "directory without index, no slash: 301 or the same code" "$STATUS" 301 "$noindex_status"

fetch dot /.secret
expect_eq "dotfile .secret: 404" "$STATUS" 404
expect_file_lacks "dotfile .secret: not leaked" "$T/dot.b" DOTFILE-SECRET
fetch git /.git/config
expect_eq ".git/config: 404" "$STATUS" 404
expect_file_lacks ".git/config: not leaked" "$T/git.b" DOTGIT-SECRET
fetch gitdir /.git/
expect_eq ".git/: 404" "$STATUS" 404

# RFC 8615: /.well-known/ is served where dotfiles are not (certbot's
# webroot writes its HTTP-01 tokens there), its own dot names are not.
mkdir -p "$FIX/root/.well-known/acme-challenge"
echo "tok-1.thumbprint" >"$FIX/root/.well-known/acme-challenge/tok-1"
echo "WELL-KNOWN-SECRET" >"$FIX/root/.well-known/.hidden"
fetch acme /.well-known/acme-challenge/tok-1
expect_eq "/.well-known/acme-challenge/TOKEN: 200 with dotfiles hidden" "$STATUS $(cat "$T/acme.b")" \
	"200 tok-1.thumbprint"
fetch wkdot /.well-known/.hidden
expect_eq "/.well-known/.hidden: 404" "$STATUS" 404
expect_file_lacks "/.well-known/.hidden: not leaked" "$T/wkdot.b" WELL-KNOWN-SECRET

fetch query '/text.txt?v=1#frag'
expect_eq "query string is ignored" "$STATUS" 200
fetch pct '/%74ext.txt'
expect_eq "percent-encoded path is decoded" "$STATUS" 200

rm -f "$T/wget.out"
timeout 30 wget -q -4 --ca-certificate="$FIX/ca.pem" -O "$T/wget.out" "$BASE/text.txt"
expect_eq "wget exit code" "$?" 0
check "wget body" cmp -s "$T/wget.out" "$FIX/root/text.txt"

stop_ktlsd

# The same on a plain listener, where ACME's HTTP-01 asks (port 80).
plain_port=$(freeport)
if start_ktlsd --listen-plain "127.0.0.1:$plain_port"; then
	got=$(curl -s --max-time 30 -w ' %{http_code}' "http://127.0.0.1:$plain_port/.well-known/acme-challenge/tok-1" | tr -d "\n")
	expect_eq "plain HTTP: /.well-known/acme-challenge/TOKEN served" "$got" "tok-1.thumbprint 200"
	stop_ktlsd
fi
rm -rf "$FIX/root/.well-known"

# --dotfiles on serves them (so the 404 above came from the policy).
start_ktlsd --dotfiles on || return 0
fetch doton /.secret
expect_eq "--dotfiles on: .secret 200" "$STATUS" 200
check "--dotfiles on: .secret body" cmp -s "$T/doton.b" "$FIX/root/.secret"
stop_ktlsd
