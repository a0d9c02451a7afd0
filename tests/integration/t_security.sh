# shellcheck shell=bash disable=SC2153 # STATUS comes from lib.sh's fetch
# Escaping the root: traversal in every spelling, NULs, overlong UTF-8,
# symlinks, absolute-form targets. Nothing outside the root may be served.

start_ktlsd || return 0

# expect_blocked NAME STATUS BODYFILE: the answer is 400, 403 or 404 and holds
# neither the outside secret nor /etc/passwd.
expect_blocked() {
	local name=$1 status=$2 body=$3
	expect_in "$name: 400/403/404" "$status" 400 403 404
	if grep -aqE 'OUTSIDE-SECRET|root:.*:0:0:' "$body" 2>/dev/null; then
		fail "$name: nothing from outside the root" "the body has outside content"
	else
		pass "$name: nothing from outside the root"
	fi
}

for p in /../outside.txt /../../../../../../etc/passwd /%2e%2e/outside.txt /%2E%2E/outside.txt \
	/%2e%2e%2foutside.txt /..%2foutside.txt /..%2f..%2fetc/passwd /a/../../outside.txt \
	/sub/../../outside.txt /./../outside.txt /.%2e/outside.txt '/%2e%2e%5coutside.txt' \
	/%252e%252e/outside.txt /..%00/outside.txt /%c0%ae%c0%ae/outside.txt /%c0%ae%c0%ae/ \
	/..%c0%afoutside.txt /dir-out/secret.txt /dir-out/ /link-out; do
	fetch trav "$p"
	expect_blocked "GET $p" "$STATUS" "$T/trav.b"
done

# Paths that normalise to something inside the root are fine, but must never
# leave it: //etc/passwd is etc/passwd under the root (absent).
fetch dbl //etc/passwd
expect_blocked "GET //etc/passwd" "$STATUS" "$T/dbl.b"
fetch nul /%00
expect_in "GET /%00: 400 or 404" "$STATUS" 400 404
fetch nul2 /text.txt%00.html
expect_in "GET /text.txt%00.html: 400 or 404" "$STATUS" 400 404
fetch badpct /%zz
expect_in "GET /%zz (bad escape): 400 or 404" "$STATUS" 400 404

fetch linkin /link-in
expect_eq "symlink inside the root: 200" "$STATUS" 200
check "symlink inside the root: target's bytes" cmp -s "$T/linkin.b" "$FIX/root/text.txt"
fetch inside /sub/../text.txt
expect_eq "dot segments that stay inside: 200" "$STATUS" 200

# Raw requests, so no client normalises anything.
for target in 'https://localhost/../outside.txt' "https://localhost:$PORT/../../outside.txt" \
	'/..\\outside.txt' '/..\\..\\outside.txt' '../outside.txt' 'outside.txt' \
	'/%2e%2e/outside.txt' '*' '/../../../../etc/passwd'; do
	raw "send=GET $target HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n" resp
	status=$(printf '%s\n' "$RAW_OUT" | sed -n 's/^RESP \([0-9]*\) .*/\1/p')
	expect_blocked "raw GET $target" "${status:-none}" "$RAWDIR/0.body"
done
raw 'send=GET https://localhost/text.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' resp
expect_eq "absolute-form inside the root: 200" "$(raw_summary)" "RESP 200 $(size "$FIX/root/text.txt")"

# Host header games do not change the root.
fetch host /text.txt -H 'Host: ../../etc'
expect_in "Host: ../../etc: served from the root or refused" "$STATUS" 200 400
check "Host: ../../etc: never /etc content" sh -c "! grep -aq 'root:.*:0:0:' '$T/host.b'"

stop_ktlsd

# ---- permission failures are said, once (issue 23, item 3) --------------------
# A file the service user may not read is a 403 for the client and a line
# for the operator with the path and the error; a second within 10 s of the
# first is only counted, so that clients cannot fill the log.
if [ "$(id -u)" = 0 ] && perm=$(nobody_site perm); then
	echo secret >"$perm/root/private.txt"
	chmod 600 "$perm/root/private.txt"
	if start_as_nobody "$perm" --workers 1; then
		fetch perm1 /private.txt
		expect_eq "a file the service user cannot read: 403" "$STATUS" 403
		fetch perm2 /private.txt
		expect_eq "asked again: 403" "$STATUS" 403
		fetch permok /big.bin
		expect_eq "the readable file beside it: 200" "$STATUS" 200
		stop_ktlsd
		expect_eq "the refusal is logged with the path and the error, once" \
			"$(grep -c 'open "private.txt" under --root .* failed: Permission denied' "$KTLSD_LOG")" 1
	fi
	rm -rf "$perm"
else
	skip "permission failures logged" "needs root, to run the server as nobody"
fi
