# shellcheck shell=bash
# Signals: SIGTERM drains (running responses finish, new connections are
# refused, exit 0), SIGINT and SIGQUIT exit at once.

want=$(cat "$FIX/big.sha256")

port_closed() {
	! port_open "$1"
}

# --- SIGTERM during a slow download: the download completes intact ---------
start_ktlsd --shutdown-grace 30 --send-timeout 30 || return 0
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
for sig in INT QUIT; do
	start_ktlsd --shutdown-grace 30 --send-timeout 30 || return 0
	rm -f "$T/int.b"
	kcurl --max-time 60 --limit-rate 2M -o "$T/int.b" "$BASE/big.bin" 2>/dev/null &
	curl_pid=$!
	wait_until 10 file_at_least "$T/int.b" $((1 << 20))
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
	if grep -qE 'ERROR: AddressSanitizer|runtime error' "$KTLSD_LOG"; then
		fail "SIG$sig: no memory error report" "$(grep -m1 -E 'ERROR: AddressSanitizer|runtime error' "$KTLSD_LOG")"
	else
		pass "SIG$sig: no memory error report"
	fi
	rm -f "$T/int.b"
	KTLSD_PID=
done
