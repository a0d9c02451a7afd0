# shellcheck shell=bash
# Signals: SIGTERM drains (running responses finish, new connections are
# refused, exit 0), SIGINT and SIGQUIT exit at once; either way the access
# log has every request, those cut by the stop included, and the pid file
# is gone. (SIGUSR1, SIGHUP's log reopening and the ignored signals:
# t_logrotate.sh.)

want=$(cat "$FIX/big.sha256")
big_size=$(size "$FIX/root/big.bin")

port_closed() {
	! port_open "$1"
}

# body_bytes LINE: the body bytes field of a combined access-log line.
body_bytes() {
	printf '%s\n' "$1" | sed -E 's/^[^"]*"([^"\\]|\\x[0-9A-F]{2})*" [0-9]{3} ([0-9]+) .*/\2/'
}

# quick_requests N TAG: N requests on one keep-alive connection, just done
# (their lines may still sit in a worker's buffer).
quick_requests() {
	kcurl -o /dev/null "$BASE/a.txt?$2=[1-$1]" >/dev/null 2>&1
}

# expect_cut NAME LOG TARGET GOT: LOG has one line for TARGET, cut by the
# shutdown, with a partial body of at least GOT bytes (what the client got).
expect_cut() {
	local l b
	l=$(grep -a "\"GET $3 " "$2")
	expect_match "$1: the cut download is logged, end=shutdown" "$l" 'end=shutdown$'
	b=$(body_bytes "$l")
	if [ -n "$b" ] && [ "$b" -ge "$4" ] && [ "$b" -lt "$big_size" ]; then
		pass "$1: its body bytes are what was sent ($b, client got $4)"
	else
		fail "$1: its body bytes are what was sent" "logged '$b', client got $4, file $big_size"
	fi
}

# --- SIGTERM during a slow download: the download completes intact ---------
start_ktlsd --shutdown-grace 30 --send-timeout 30 --access-log "$T/term.log" \
	--pid-file "$T/term.pid" || return 0
expect_eq "--pid-file: the file holds the pid" "$(cat "$T/term.pid" 2>/dev/null)" "$KTLSD_PID"
rm -f "$T/slow.b"
kcurl --max-time 60 --limit-rate 2M -o "$T/slow.b" "$BASE/big.bin" 2>"$T/slow.err" &
curl_pid=$!
if wait_until 10 file_at_least "$T/slow.b" $((1 << 20)); then
	pass "slow download under way"
else
	fail "slow download under way" "less than 1 MiB after 10 s"
fi
kill -TERM "$KTLSD_PID"
term_at=$SECONDS
if wait_until 3 port_closed "$PORT"; then
	pass "after SIGTERM: the listening port is closed"
else
	fail "after SIGTERM: the listening port is closed" "still accepting TCP connections 3 s later"
fi
st=$(kcurl --max-time 3 -o /dev/null -w '%{http_code}' "$BASE/a.txt" 2>/dev/null)
expect_eq "after SIGTERM: a new request gets no response" "$st" 000
if kill -0 "$KTLSD_PID" 2>/dev/null; then
	pass "after SIGTERM: server still running for the download"
else
	fail "after SIGTERM: server still running for the download" "it exited before the download finished"
fi
wait "$curl_pid"
expect_eq "download across SIGTERM: curl exit code" "$?" 0
expect_eq "download across SIGTERM: sha256" "$(sha "$T/slow.b")" "$want"
rm -f "$T/slow.b"
if wait_exit "$KTLSD_PID" 10; then
	expect_eq "exit code after draining" "$EXIT_CODE" 0
	check "exits within the grace period" test $((SECONDS - term_at)) -lt 30
else
	fail "exits after the download drained" "still running 10 s after the last response"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
check "no sanitizer report after draining" sanitizer_clean "$KTLSD_LOG"
KTLSD_PID=
check "SIGTERM: the pid file is removed" test ! -e "$T/term.pid"
expect_match "SIGTERM: the drained download is logged, complete" \
	"$(grep -a '"GET /big.bin ' "$T/term.log")" " 200 $big_size .* end=complete\$"

# --- SIGTERM, grace over: downloads cut at shutdown are logged --------------
# One over HTTP/1.1, one over HTTP/2; and requests just answered, whose
# lines may still be in the workers' buffers, are all there.
start_ktlsd --shutdown-grace 1 --send-timeout 30 --access-log "$T/grace.log" || return 0
rm -f "$T/g1.b" "$T/g2.b"
kcurl --max-time 60 --limit-rate 1M -o "$T/g1.b" "$BASE/big.bin?grace=h1" 2>/dev/null &
g1_pid=$!
KCURL_HTTP=--http2 kcurl --max-time 60 --limit-rate 1M -o "$T/g2.b" "$BASE/big.bin?grace=h2" 2>/dev/null &
g2_pid=$!
wait_until 10 file_at_least "$T/g1.b" $((256 << 10))
wait_until 10 file_at_least "$T/g2.b" $((256 << 10))
quick_requests 50 term
kill -TERM "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 10; then
	expect_eq "SIGTERM, grace over: exit code" "$EXIT_CODE" 0
else
	fail "SIGTERM, grace over: exits" "still running 10 s later"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
KTLSD_PID=
wait "$g1_pid" "$g2_pid"
expect_cut "SIGTERM, grace over, HTTP/1.1" "$T/grace.log" "/big.bin?grace=h1" "$(size "$T/g1.b")"
expect_cut "SIGTERM, grace over, HTTP/2" "$T/grace.log" "/big.bin?grace=h2" "$(size "$T/g2.b")"
expect_eq "SIGTERM: the 50 requests just answered are all logged" \
	"$(grep -c '"GET /a.txt?term=' "$T/grace.log")" 50
rm -f "$T/g1.b" "$T/g2.b"

# --- SIGTERM when idle: exit 0 quickly --------------------------------------
start_ktlsd --shutdown-grace 30 || return 0
fetch warm /a.txt
expect_eq "idle server answered a request" "$STATUS" 200
kill -TERM "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 3; then
	expect_eq "SIGTERM when idle: exit code" "$EXIT_CODE" 0
else
	fail "SIGTERM when idle: exits within 3 s" "still running"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
check "SIGTERM when idle: no sanitizer report" sanitizer_clean "$KTLSD_LOG"
KTLSD_PID=

# --- SIGTERM with an idle keep-alive connection: it does not hold the exit --
start_ktlsd --shutdown-grace 30 || return 0
timeout 30 "$PY" "$LIBPY" raw "$PORT" 'send=GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' \
	resp close=25 >"$T/ka.out" 2>&1 &
ka_pid=$!
wait_until 5 grep -q '^RESP 200' "$T/ka.out"
kill -TERM "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 3; then
	expect_eq "SIGTERM with an idle keep-alive connection: exit code" "$EXIT_CODE" 0
else
	fail "SIGTERM with an idle keep-alive connection: exits within 3 s" "still running"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
wait "$ka_pid"
check "SIGTERM with an idle keep-alive connection: client saw the close" grep -q '^CLOSED' "$T/ka.out"
KTLSD_PID=

# --- SIGINT and SIGQUIT: exit at once, even with a download running ---------
# The access log still gets the cut download and every request just
# answered; the pid file goes.
for sig in INT QUIT; do
	start_ktlsd --shutdown-grace 30 --send-timeout 30 --access-log "$T/$sig.log" \
		--pid-file "$T/$sig.pid" || return 0
	rm -f "$T/int.b"
	kcurl --max-time 60 --limit-rate 2M -o "$T/int.b" "$BASE/big.bin?sig=$sig" 2>/dev/null &
	curl_pid=$!
	wait_until 10 file_at_least "$T/int.b" $((1 << 20))
	quick_requests 50 "$sig"
	kill -"$sig" "$KTLSD_PID"
	if wait_exit "$KTLSD_PID" 3; then
		pass "SIG$sig: exits within 3 s despite a running download"
	else
		fail "SIG$sig: exits within 3 s despite a running download" "still running"
		kill -KILL "$KTLSD_PID"
		wait "$KTLSD_PID" 2>/dev/null
	fi
	wait "$curl_pid"
	expect_ne "SIG$sig: the interrupted download reports an error" "$?" 0
	expect_cut "SIG$sig" "$T/$sig.log" "/big.bin?sig=$sig" "$(size "$T/int.b")"
	expect_eq "SIG$sig: the 50 requests just answered are all logged" \
		"$(grep -c "\"GET /a.txt?$sig=" "$T/$sig.log")" 50
	check "SIG$sig: the pid file is removed" test ! -e "$T/$sig.pid"
	if grep -qE 'ERROR: AddressSanitizer|runtime error' "$KTLSD_LOG"; then
		fail "SIG$sig: no memory error report" "$(grep -m1 -E 'ERROR: AddressSanitizer|runtime error' "$KTLSD_LOG")"
	else
		pass "SIG$sig: no memory error report"
	fi
	rm -f "$T/int.b"
	KTLSD_PID=
done

# --- SIGINT during SIGTERM's grace period: exit at once ---------------------
start_ktlsd --shutdown-grace 30 --send-timeout 30 --access-log "$T/term-int.log" || return 0
rm -f "$T/ti.b"
kcurl --max-time 60 --limit-rate 1M -o "$T/ti.b" "$BASE/big.bin?term=int" 2>/dev/null &
curl_pid=$!
wait_until 10 file_at_least "$T/ti.b" $((256 << 10))
kill -TERM "$KTLSD_PID"
sleep 0.5
kill -INT "$KTLSD_PID"
if wait_exit "$KTLSD_PID" 5; then
	pass "SIGINT during the grace period: exits at once"
else
	fail "SIGINT during the grace period: exits at once" "still running 5 s later"
	kill -KILL "$KTLSD_PID"
	wait "$KTLSD_PID" 2>/dev/null
fi
KTLSD_PID=
wait "$curl_pid"
expect_cut "SIGINT during the grace period" "$T/term-int.log" "/big.bin?term=int" "$(size "$T/ti.b")"
rm -f "$T/ti.b"

# --- a start that fails after writing the pid file removes it ---------------
PORT=$(freeport)
timeout 10 "$KTLSD" --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" \
	--key "$FIX/ec.key" --workers 1 --pid-file "$T/fail.pid" --user no-such-user-ktlsd \
	>"$T/fail.out" 2>&1 </dev/null
expect_eq "--user no-such-user: exit code 1" "$?" 1
check "--user no-such-user: the pid file is removed" test ! -e "$T/fail.pid"
