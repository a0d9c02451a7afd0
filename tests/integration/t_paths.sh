# shellcheck shell=bash
# [path PREFIX] sections (issue 23, item 7): fields per folder, the longest
# prefix winning, matched on the normalised path (no escape or dot segment
# gets round a deny); allow and deny by address; redirects that keep the
# rest of the path and the query, %-encoded; --https-redirect on the plain
# listener; a reload that changes the rules; and the lines that do not load.

P=$T/paths
mkdir -p "$P/root/nightly/deep" "$P/root/releases" "$P/root/private" "$P/root/nightlyx"
echo n >"$P/root/nightly/n.txt"
echo d >"$P/root/nightly/deep/d.txt"
echo r >"$P/root/releases/r.txt"
echo p >"$P/root/private/p.txt"
echo x >"$P/root/nightlyx/x.txt"
PLAIN=$(freeport)

printf '<!DOCTYPE html><title>Not here</title><p>Try the mirror list.</p>\n' >"$P/404.html"
printf '<!DOCTYPE html><title>Internal</title><p>Ask the admins.</p>\n' >"$P/403.html"
write_conf() {
	cat >"$P/ktlsd.conf" <<CONF
root $P/root
error-page "404 $P/404.html"
error-page "403 $P/403.html"
cert $FIX/ec.pem
key $FIX/ec.key
listen-plain 127.0.0.1:$PLAIN
workers 2
header "Cache-Control: public, max-age=300"
header "X-Site: top"
https-redirect on

[path /nightly/]
header "Cache-Control: no-cache"

[path /nightly/deep]
header "X-Deep: yes"

[path /private/]
allow 127.0.0.1
allow ::1
deny all

[path /old/]
redirect 308 https://mirror.example.org/new/
$1
CONF
}
write_conf ""
check "the config with [path] sections tests ok" "$KTLSD" --test-config --config "$P/ktlsd.conf" \
	--listen "127.0.0.1:$(freeport)"
start_on_free_port --config "$P/ktlsd.conf" || return 0

for v in --http1.1 --http2; do
	KCURL_HTTP=$v fetch n /nightly/n.txt
	expect_eq "$v /nightly/: its Cache-Control in the site's place, the site's other field kept" \
		"$STATUS $(hdr_count "$T/n.h" Cache-Control) $(hdr "$T/n.h" Cache-Control) $(hdr "$T/n.h" X-Site)" \
		"200 1 no-cache top"
	KCURL_HTTP=$v fetch d /nightly/deep/d.txt
	expect_eq "$v /nightly/deep: the longest prefix alone (the site's fields, and its own)" \
		"$STATUS $(hdr "$T/d.h" Cache-Control) $(hdr "$T/d.h" X-Deep)" "200 public, max-age=300 yes"
	KCURL_HTTP=$v fetch x /nightlyx/x.txt
	expect_eq "$v /nightlyx/ is not beneath /nightly/ (a segment at a time)" \
		"$STATUS $(hdr "$T/x.h" Cache-Control)" "200 public, max-age=300"
	KCURL_HTTP=$v fetch r /releases/r.txt
	expect_eq "$v /releases/: no rule, the site's fields" "$STATUS $(hdr "$T/r.h" Cache-Control)" \
		"200 public, max-age=300"
done

# ---- allow and deny, on the normalised path ----
fetch p /private/p.txt
expect_eq "/private/ from 127.0.0.1 (allowed)" "$STATUS $(cat "$T/p.b")" "200 p"
for t in /private/p.txt /%70rivate/p.txt /releases/../private/p.txt //private//p.txt /./private/p.txt; do
	fetch denied "$t" --interface 127.0.0.2
	expect_eq "$t from 127.0.0.2: 403 (deny all)" "$STATUS" 403
done
KCURL_HTTP=--http2 fetch denied2 /private/p.txt --interface 127.0.0.2
expect_eq "HTTP/2 from 127.0.0.2: 403" "$STATUS" 403
STATUS=$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' --interface 127.0.0.2 \
	-H "Host: localhost" "http://127.0.0.1:$PLAIN/private/p.txt" 2>/dev/null)
expect_eq "the rules hold on plain HTTP too (here the https redirect comes first: 301)" "$STATUS" 301

# ---- --error-page: the site's page in place of ktlsd's ----
for v in --http1.1 --http2; do
	KCURL_HTTP=$v fetch missing /no-such-file
	expect_eq "$v a 404: the site's page, its length, no site field" \
		"$STATUS $(cmp -s "$T/missing.b" "$P/404.html" && echo same) $(hdr "$T/missing.h" Content-Length) $(hdr "$T/missing.h" X-Site)" \
		"404 same $(stat -c %s "$P/404.html") "
	KCURL_HTTP=$v fetch denied_page /private/p.txt --interface 127.0.0.2
	expect_eq "$v a 403 of a deny: the site's 403 page" \
		"$STATUS $(cmp -s "$T/denied_page.b" "$P/403.html" && echo same)" "403 same"
	KCURL_HTTP=$v fetch headmissing /no-such-file -I
	expect_eq "$v HEAD of a 404: the page's length, no body" \
		"$STATUS $(hdr "$T/headmissing.h" Content-Length) $(grep -c 'mirror list' "$T/headmissing.b")" \
		"404 $(stat -c %s "$P/404.html") 0"
done
fetch badtarget '/%zz'
expect_eq "a status without a page of the site's: ktlsd's own (400)" \
	"$STATUS $(grep -c 'Bad Request' "$T/badtarget.b")" "400 1"

# ---- redirects ----
for v in --http1.1 --http2; do
	KCURL_HTTP=$v fetch old '/old/a/b%20c.iso?x=1&y=%41'
	expect_eq "$v redirect 308: the rest of the path, %-encoded, and the query" \
		"$STATUS $(hdr "$T/old.h" Location)" "308 https://mirror.example.org/new/a/b%20c.iso?x=1&y=%41"
done
fetch oldroot /old/
expect_eq "the prefix itself: the URL alone" "$STATUS $(hdr "$T/oldroot.h" Location)" \
	"308 https://mirror.example.org/new/"
fetch oldcrlf '/old/a%0d%0aSet-Cookie:x'
expect_eq "a decoded CR LF goes into Location %-encoded, never raw" \
	"$STATUS $(hdr "$T/oldcrlf.h" Location) $(hdr_count "$T/oldcrlf.h" Set-Cookie)" \
	"308 https://mirror.example.org/new/a%0D%0ASet-Cookie:x 0"

# ---- --https-redirect: plain HTTP to https://, the host without its port ----
plain() {
	curl -sS --max-time 30 -D "$T/plain.h" -o /dev/null -w '%{http_code}' "$@" 2>/dev/null
}
STATUS=$(plain -H "Host: dl.example.org:$PLAIN" "http://127.0.0.1:$PLAIN/releases/r.txt?q=1")
expect_eq "--https-redirect: 301 to the https listener's port, path and query kept" \
	"$STATUS $(hdr "$T/plain.h" Location)" "301 https://dl.example.org:$PORT/releases/r.txt?q=1"
STATUS=$(plain -H "Host: [::1]:$PLAIN" "http://127.0.0.1:$PLAIN/")
expect_eq "--https-redirect: an IP literal keeps its brackets" \
	"$STATUS $(hdr "$T/plain.h" Location)" "301 https://[::1]:$PORT/"
STATUS=$(plain --http1.0 -H "Host:" "http://127.0.0.1:$PLAIN/releases/r.txt")
expect_eq "--https-redirect: HTTP/1.0 without a Host has nowhere to go: 400, never the file" \
	"$STATUS" 400
raw_out=$(timeout 20 "$PY" - "$PLAIN" <<'PYEOF' | tr -d '\r' | grep -iE '^(HTTP|location)'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET /caf\xc3\xa9.txt HTTP/1.1\r\nHost: dl.example.org\r\nConnection: close\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
sys.stdout.write(data.decode("latin-1"))
PYEOF
)
expect_eq "--https-redirect: a raw UTF-8 target is redirected, %-encoded, never served" \
	"$(echo "$raw_out" | tr '\n' ' ')" "HTTP/1.1 301 Moved Permanently Location: https://dl.example.org:$PORT/caf%C3%A9.txt "
echo cafe >"$P/root/café.txt"
printf 'root %s\nlisten-plain 127.0.0.1:%s\nhttps-redirect on\n' "$P/root" "$PLAIN" >"$P/nolisten.conf"
"$KTLSD" --test-config --config "$P/nolisten.conf" >/dev/null 2>"$T/nolisten.err"
expect_eq "--https-redirect without a TLS listener: refused" \
	"$? $(grep -c 'https-redirect on: no TLS listener' "$T/nolisten.err")" "2 1"

# ---- a reload changes the rules ----
write_conf "
[path /releases/]
deny all"
kill -HUP "$KTLSD_PID"
wait_until 20 grep -q "reloaded" "$KTLSD_LOG"
fetch r2 /releases/r.txt
expect_eq "after SIGHUP: a new [path] applies" "$STATUS" 403
fetch n2 /nightly/n.txt
expect_eq "... and the others still do" "$STATUS $(hdr "$T/n2.h" Cache-Control)" "200 no-cache"
stop_ktlsd

# ---- what does not load: one line naming it ----
bad() {
	local name=$1 want=$2
	printf 'root %s\nlisten-plain 127.0.0.1:%s\n%b\n' "$P/root" "$PLAIN" "$3" >"$P/bad.conf"
	"$KTLSD" --test-config --config "$P/bad.conf" >"$T/bad.out" 2>"$T/bad.err"
	expect_eq "$name: exit 2" "$?" 2
	expect_match "$name: one line naming it" "$(head -n 1 "$T/bad.err")$(grep -c '' "$T/bad.err")" "$want.*1\$"
}
bad "a prefix that is no path" "needs a PREFIX that starts with '/'" '[path nightly/]'
bad "an address that is none" "allow: expected ADDR" '[path /a/]\nallow 10.0.0.0/33'
bad "a redirect code" "redirect: expected" '[path /a/]\nredirect 303 https://x/'
bad "a site key in a [path]" "not a \\[path\\] key 'root'" '[path /a/]\nroot /tmp'
bad "the same prefix twice" "a second \\[path /a/\\]" '[path /a/]\n[path /a/]'
bad "one folder spelt twice" "\\[path /a\\]: the same folder as \\[path /a/\\]" '[path /a/]\ndeny all\n[path /a]'
printf '[path /a/]\ndeny all\n[site s]\nroot %s\n' "$P/root" >"$P/bad.conf"
"$KTLSD" --test-config --config "$P/bad.conf" >/dev/null 2>"$T/bad.err"
expect_eq "a [path] above the first [site] with no top-level root: refused" \
	"$? $(grep -c 'the top level has no root' "$T/bad.err")" "2 1"
bad "a field ktlsd sets" "ktlsd sets Content-Type itself" '[path /a/]\nheader "Content-Type: x"'
head -c 20000 /dev/zero | tr '\0' x >"$P/big.html"
bad "an error page over 16 KiB" "error-page 404 .*big.html: 20000 bytes, at most 16384" "error-page \"404 $P/big.html\""
bad "an error page of a 2xx" "expected \"CODE FILE\", CODE from 400 to 599" "error-page \"200 $P/404.html\""
bad "an error page that is not there" "error-page 404 .*no-such.html" "error-page \"404 $P/no-such.html\""


# ---- under --user, a root-only error page reloads through the helper ----
if [ "$(id -u)" != 0 ]; then
	skip "--error-page under --user: a root-only page reloads" "needs root (only root becomes --user)"
elif site=$(nobody_site paths); then
	echo '<p>page one</p>' >"$site/404.html"
	chmod 600 "$site/404.html"
	printf 'root %s\nerror-page "404 %s"\nuser nobody\ncert %s\nkey %s\n' "$site/root" \
		"$site/404.html" "$site/ec.pem" "$site/ec.key" >"$site/ktlsd.conf"
	if start_on_free_port --config "$site/ktlsd.conf" --workers 1; then
		fetch page1 /nope
		expect_eq "--user nobody, a 0600 root page: served (read before the drop)" \
			"$STATUS $(cat "$T/page1.b")" "404 <p>page one</p>"
		echo '<p>page two</p>' >"$site/404.html"
		kill -HUP "$KTLSD_PID"
		wait_until 20 grep -q "reloaded" "$KTLSD_LOG"
		fetch page2 /nope
		expect_eq "... and after SIGHUP the new one (through the privileged helper)" \
			"$STATUS $(cat "$T/page2.b")" "404 <p>page two</p>"
		stop_ktlsd
	fi
	rm -rf "$site"
fi
