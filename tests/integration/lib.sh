# shellcheck shell=bash
# Helpers for the integration tests, sourced by `run` into the shell that runs
# each t_*.sh. The environment `run` exports:
#   KTLSD   the server binary          FIX   the fixtures (certs, root, files)
#   WORK    the run's scratch folder   RESULTS  file that collects ok/FAIL lines
#   TEST    the name of the test file being run (t_basic, ...)
# Each test file gets its own scratch folder $T.

PY=/usr/bin/python3
LIBPY="$(dirname "${BASH_SOURCE[0]}")/lib.py"
T="$WORK/$TEST"
mkdir -p "$T"

# ---- results ----------------------------------------------------------------

# pass NAME / fail NAME DETAIL: record one check.
pass() {
	printf 'ok %s: %s\n' "$TEST" "$1" | tee -a "$RESULTS"
}
fail() {
	local detail=${2//$'\n'/ | }
	printf 'FAIL %s: %s: %s\n' "$TEST" "$1" "${detail//$'\r'/}" | tee -a "$RESULTS"
}
# skip NAME WHY: a check that cannot run here (a missing tool, not root, a
# sanitizer build). Counted apart: a check that did not run never passed.
skip() {
	local why=${2//$'\n'/ | }
	printf 'SKIP %s: %s: %s\n' "$TEST" "$1" "${why//$'\r'/}" | tee -a "$RESULTS"
}

# check NAME COMMAND...: passes when COMMAND exits 0.
check() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		pass "$name"
	else
		fail "$name" "command failed: $*"
	fi
}

# expect_eq NAME GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "got '$(printf %s "$2" | head -c 300)', want '$3'"
	fi
}

# expect_ne NAME GOT UNWANTED
expect_ne() {
	if [ "$2" != "$3" ]; then
		pass "$1"
	else
		fail "$1" "got '$2', which it must not be"
	fi
}

# expect_in NAME GOT ALLOWED...: GOT is one of ALLOWED.
expect_in() {
	local name=$1 got=$2 a
	shift 2
	for a in "$@"; do
		if [ "$got" = "$a" ]; then
			pass "$name"
			return 0
		fi
	done
	fail "$name" "got '$(printf %s "$got" | head -c 300)', want one of: $*"
}

# expect_match NAME GOT ERE: GOT matches the extended regex ERE.
expect_match() {
	if printf '%s' "$2" | grep -Eq -- "$3"; then
		pass "$1"
	else
		fail "$1" "got '$(printf %s "$2" | head -c 300)', want a match for /$3/"
	fi
}

# expect_file_lacks NAME FILE STRING: FILE does not contain STRING.
expect_file_lacks() {
	if [ -f "$2" ] && grep -aqF -- "$3" "$2"; then
		fail "$1" "$2 contains '$3'"
	else
		pass "$1"
	fi
}

# ---- the server -------------------------------------------------------------

# start_ktlsd ARGS...: start the server on a free loopback port with both
# certificates, plus ARGS; wait until it accepts. Sets PORT, BASE (the
# https:// URL prefix), KTLSD_PID and KTLSD_LOG (its stderr). Returns 1 (after
# recording a failure) if it does not come up within 10 s.
start_ktlsd() {
	start_on_free_port --root "$FIX/root" --cert "$FIX/ec.pem" --key "$FIX/ec.key" \
		--cert "$FIX/rsa.pem" --key "$FIX/rsa.key" --workers 2 "$@"
}

# start_on_free_port ARGS...: start "$KTLSD" ARGS... --listen 127.0.0.1:PORT
# on a free port, as start_ktlsd does (which gives the fixtures' root and
# certificates); for a test with a root or certificates of its own.
start_on_free_port() {
	local attempt
	# shellcheck disable=SC2034 # attempt only counts
	for attempt in 1 2 3; do
		PORT=$(freeport) || break
		launch "$@" --listen "127.0.0.1:$PORT"
		case $? in 0) return 0 ;; 2) return 1 ;; esac
		# Someone may have taken the port between the probe and the bind.
		grep -qi 'in use' "$KTLSD_LOG" || break
	done
	fail "start ktlsd $*" "server exited at start; log: $(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	return 1
}

# launch ARGS...: start "$KTLSD" ARGS... (nothing added) and wait up to 10 s
# until 127.0.0.1:$PORT accepts. With LAUNCH_WRAP (an array) set, that
# command goes in front: it must exec the server in its own place (lib.py
# stdout-to), so that the pid stays the server's. On success sets KTLSD_PID and returns 0. If
# the server exits first, KTLSD_PID is empty and it returns 1; if it never
# accepts, it is killed, a failure is recorded and it returns 2.
launch() {
	local i
	KTLSD_STARTS=$((${KTLSD_STARTS:-0} + 1))
	KTLSD_LOG="$T/ktlsd.$KTLSD_STARTS.log"
	BASE="https://localhost:$PORT"
	"${LAUNCH_WRAP[@]}" "$KTLSD" "$@" </dev/null >>"$KTLSD_LOG" 2>&1 &
	KTLSD_PID=$!
	echo "$KTLSD_PID" >>"$T/pids"
	for ((i = 0; i < 200; i++)); do
		if ! kill -0 "$KTLSD_PID" 2>/dev/null; then
			wait "$KTLSD_PID" 2>/dev/null
			KTLSD_PID=
			return 1
		fi
		if port_open "$PORT" && port_is_ours "$PORT" "$KTLSD_PID"; then
			return 0
		fi
		sleep 0.05
	done
	kill -KILL "$KTLSD_PID" 2>/dev/null
	wait "$KTLSD_PID" 2>/dev/null
	KTLSD_PID=
	fail "start ktlsd $*" "not accepting on port $PORT after 10 s; log: $(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
	return 2
}

# port_is_ours PORT PID: the socket listening on 127.0.0.1:PORT belongs to
# PID, not to a server another test file started on the same port between
# our probe for a free port and our bind (which then fails).
port_is_ours() {
	ss -Hltnp "sport = :$1" 2>/dev/null | grep -q "pid=$2,"
}

# py_client SECS SCRIPT ARGS...: a Python test client, bounded in time. Sets
# OUT (its output on one line) and PY_OUT (the file that keeps it whole).
PY_N=0
py_client() {
	local secs=$1
	shift
	PY_N=$((PY_N + 1))
	PY_OUT="$T/py.$PY_N.out"
	timeout "$secs" "$PY" "$@" >"$PY_OUT" 2>&1
	OUT=$(tr '\n' ' ' <"$PY_OUT" | sed 's/ $//')
}

# freeport: print a free port (see lib.py), never one this test file was
# given before (it may not be bound yet: a server takes several).
freeport() {
	local p i
	for ((i = 0; i < 50; i++)); do
		p=$("$PY" "$LIBPY" freeport) || return 1
		if ! grep -qx "$p" "$T/ports.given" 2>/dev/null; then
			echo "$p" >>"$T/ports.given"
			echo "$p"
			return 0
		fi
	done
	return 1
}

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# expect_exit0 PID SECS WHAT: the check WHAT, that PID (a child of this
# shell) exits 0 within SECS; killed if it has not.
expect_exit0() {
	if wait_exit "$1" "$2"; then
		expect_eq "$3" "$EXIT_CODE" 0
	else
		fail "$3" "still running $2 s later; killed"
		kill -KILL "$1" 2>/dev/null
	fi
}

# wait_exit PID SECS: wait up to SECS for PID (a child of this shell) to exit;
# sets EXIT_CODE, returns 1 on timeout.
wait_exit() {
	local pid=$1 i n=$(($2 * 20))
	for ((i = 0; i < n; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null
			EXIT_CODE=$?
			return 0
		fi
		sleep 0.05
	done
	EXIT_CODE=
	return 1
}

# sanitizer_clean LOG: no AddressSanitizer / UBSan report in LOG.
sanitizer_clean() {
	! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$1"
}

# stop_ktlsd: SIGTERM, wait up to 10 s, expect exit code 0 and a log free of
# sanitizer reports. Records checks; and a failure, only, if an HTTP/2
# connection stalled (h2_conn.c's h2_tick drives it on and says so: a bug
# the server survives, which no test may pass over).
stop_ktlsd() {
	[ -n "${KTLSD_PID:-}" ] || return 0
	kill -TERM "$KTLSD_PID" 2>/dev/null
	if wait_exit "$KTLSD_PID" 10; then
		expect_eq "server exits 0 on SIGTERM (start $KTLSD_STARTS)" "$EXIT_CODE" 0
	else
		fail "server exits on SIGTERM (start $KTLSD_STARTS)" "still running after 10 s; killed"
		kill -KILL "$KTLSD_PID" 2>/dev/null
		wait "$KTLSD_PID" 2>/dev/null
	fi
	if grep -q "HTTP/2 connection stalled" "$KTLSD_LOG"; then
		fail "no HTTP/2 connection stalled (start $KTLSD_STARTS)" "$(grep -m1 "HTTP/2 connection stalled" "$KTLSD_LOG")"
	fi
	if sanitizer_clean "$KTLSD_LOG"; then
		pass "no sanitizer report (start $KTLSD_STARTS)"
	else
		fail "no sanitizer report (start $KTLSD_STARTS)" "$(grep -m1 -E 'AddressSanitizer|LeakSanitizer|runtime error' "$KTLSD_LOG")"
	fi
	KTLSD_PID=
}

# ---- clients ----------------------------------------------------------------

# kcurl ARGS...: curl that trusts both test certificates and sends
# "localhost" to 127.0.0.1:$PORT. Use with "$BASE/path". HTTP/1.1 unless
# KCURL_HTTP says otherwise (e.g. KCURL_HTTP=--http2 to run the curl-based
# checks over HTTP/2).
kcurl() {
	curl -sS --max-time 30 --cacert "$FIX/ca.pem" "${KCURL_HTTP:---http1.1}" \
		--resolve "localhost:$PORT:127.0.0.1" "$@"
}

# fetch NAME PATH [CURL-ARGS...]: GET $BASE$PATH (exactly as written: no dot
# segment folding). Headers go to $T/NAME.h, the body to $T/NAME.b, curl's
# complaints to $T/NAME.err; sets
# STATUS (000 when no response) and RC (curl's exit code).
fetch() {
	local name=$1 path=$2
	shift 2
	rm -f "$T/$name.h" "$T/$name.b"
	# shellcheck disable=SC2034 # STATUS and RC are read by the tests
	STATUS=$(kcurl --path-as-is -D "$T/$name.h" -o "$T/$name.b" -w '%{http_code}' "$@" "$BASE$path" 2>"$T/$name.err")
	# shellcheck disable=SC2034
	RC=$?
	[ -f "$T/$name.h" ] || : >"$T/$name.h"
	[ -f "$T/$name.b" ] || : >"$T/$name.b"
}

# nobody_site NAME: a folder a server running as nobody can read, on the
# disk (so that evict works): root/big.bin (the fixtures'), ec.pem, ec.key,
# all 0644; prints its path.
nobody_site() {
	local d
	d=$(mktemp -d "/var/tmp/ktlsd-$1.XXXXXX") && chmod 755 "$d" && mkdir "$d/root" &&
		cp "$FIX/root/big.bin" "$d/root/big.bin" && cp "$FIX/ec.pem" "$FIX/ec.key" "$d/" &&
		chmod 644 "$d/ec.key" "$d/ec.pem" "$d/root/big.bin" && echo "$d"
}

# start_as_nobody DIR ARGS...: start_on_free_port ARGS... as nobody with no
# capability, as systemd or --user would run it, serving DIR's root with
# its certificate (nobody_site).
start_as_nobody() {
	local d=$1 rc
	shift
	LAUNCH_WRAP=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --)
	start_on_free_port --root "$d/root" --cert "$d/ec.pem" --key "$d/ec.key" "$@"
	rc=$?
	LAUNCH_WRAP=()
	return $rc
}

# evict FILE: drop FILE's pages from the page cache, written back first
# (fadvise DONTNEED drops only clean pages). Another test downloading the
# same file may bring it back: evict a copy of the test's own.
evict() {
	"$PY" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fdatasync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}

# hdr FILE NAME: the value of header NAME (case-insensitive) in the header
# dump FILE, without the CR; the last one if repeated.
hdr() {
	tr -d '\r' <"$1" | awk -v n="$2" '
		BEGIN { n = tolower(n) }
		{ i = index($0, ":"); if (i > 1 && tolower(substr($0, 1, i - 1)) == n) { v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); last = v } }
		END { printf "%s", last }'
}

# hdr_count FILE NAME: how many times header NAME appears in FILE.
hdr_count() {
	tr -d '\r' <"$1" | grep -ic "^$2:"
}

# raw STEP...: lib.py raw on $PORT over TLS (see lib.py). Sets RAW_OUT (its
# output lines, e.g. "RESP 200 10" / "CLOSED 0.01"), RAW_RC (its exit code)
# and RAWDIR (where response N is saved as N.head and N.body).
RAW_N=0
raw() {
	RAW_N=$((RAW_N + 1))
	RAWDIR="$T/raw.$RAW_N"
	RAW_OUT=$(timeout 30 "$PY" "$LIBPY" raw --dir "$RAWDIR" "$PORT" "$@" 2>&1)
	# shellcheck disable=SC2034 # read by the tests
	RAW_RC=$?
}

# raw_summary: RAW_OUT on one line with the close time dropped ("RESP 200 10
# CLOSED"), for comparing with expect_eq.
raw_summary() {
	printf '%s\n' "$RAW_OUT" | sed 's/^CLOSED .*/CLOSED/' | tr '\n' ' ' | sed 's/ $//'
}

# size FILE: its size in bytes.
size() {
	stat -c %s "$1"
}

# sha FILE: its sha256.
sha() {
	sha256sum "$1" | cut -d' ' -f1
}

# wait_until SECS COMMAND...: poll COMMAND every 50 ms for up to SECS.
wait_until() {
	local i n=$(($1 * 20))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# file_at_least FILE BYTES
file_at_least() {
	[ -f "$1" ] && [ "$(stat -c %s "$1")" -ge "$2" ]
}
