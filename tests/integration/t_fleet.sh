# shellcheck shell=bash
# timeout: 300
# A fleet on an existing balancer: Debian's HAProxy in TCP mode with
# send-proxy-v2 (doc/fleet/haproxy.cfg) in front of two nodes
# (doc/fleet/ktlsd-node.conf) on 127.0.0.11 and 127.0.0.12, both files run as
# shipped but for addresses, ports and paths. With curl and openssl s_client:
# a session from one node resumes on the other (one key file), and not on a
# node with another key; each node's access log shows the real client
# (curl --interface 127.0.0.3/.4), not HAProxy; a node sent SIGTERM during
# downloads is taken out by HAProxy's /healthz check while its downloads
# finish there and new requests go to the other node; a node that dies
# (SIGINT) has its cut downloads resumed (-C -) on the other, byte for byte.

# shellcheck disable=SC2154 # top_srcdir is set by run
DOC=$top_srcdir/doc/fleet
if ! command -v haproxy >/dev/null 2>&1; then
	skip "haproxy in front of two nodes" "haproxy is not installed (scripts/install-deps installs it)"
	return 0
fi

want=$(cat "$FIX/big.sha256")
NPORT=$(freeport)
SPORT=$(freeport)
HPORT=$(freeport)
URL=https://localhost:$HPORT
declare -A NODE_ADDR=([node1]=127.0.0.11 [node2]=127.0.0.12) NODE_PID=() NODE_STARTS=()
openssl rand 80 >"$T/ticket.key"
openssl rand 80 >"$T/other.key"

# render SRC DST OLD NEW...: SRC with each OLD (a literal string, which must
# be there: a doc that changes under the test fails it) replaced by NEW.
render() {
	"$PY" - "$@" <<'PY'
import sys
src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(src).read()
for old, new in zip(pairs[0::2], pairs[1::2]):
    if old not in text:
        sys.exit(f"{src}: no '{old}' in it")
    text = text.replace(old, new)
open(dst, "w").write(text)
PY
}

# conf_value FILE KEY: the value of "KEY VALUE" in a ktlsd config file.
conf_value() {
	sed -n "s/^$2[ =]*//p" "$1" | tail -n 1
}

# health NODE: the status /healthz of NODE answers with.
health() {
	curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://${NODE_ADDR[$1]}:$SPORT/healthz"
}
health_is() {
	[ "$(health "$1")" = "$2" ]
}

# node_listening NODE: its HTTPS port is bound by its process.
node_listening() {
	ss -Hltnp "src ${NODE_ADDR[$1]}:$NPORT" 2>/dev/null | grep -q "pid=${NODE_PID[$1]},"
}

# start_node NODE: ktlsd from doc/fleet/ktlsd-node.conf on NODE's address,
# HTTPS on $NPORT (proxy-protocol), status on $SPORT, the shared ticket key,
# its own access log; every 2xx says "X-Node: NODE". --drain-delay 600: the
# drain lasts until a second SIGTERM, so that what is checked during it
# cannot race its end.
start_node() {
	local n=$1 a=${NODE_ADDR[$1]} log
	render "$DOC/ktlsd-node.conf" "$T/$n.conf" \
		/srv/mirror "$FIX/root" /etc/ktlsd/ec.pem "$FIX/ec.pem" /etc/ktlsd/ec.key "$FIX/ec.key" \
		192.0.2.11:8443 "$a:$NPORT" 192.0.2.11:9100 "$a:$SPORT" \
		/etc/ktlsd/ticket.key "$T/ticket.key" /var/log/ktlsd/access.log "$T/$n.access.log" ||
		{ fail "start $n" "cannot fill in $DOC/ktlsd-node.conf"; return 1; }
	NODE_STARTS[$n]=$((${NODE_STARTS[$n]:-0} + 1))
	log=$T/$n.${NODE_STARTS[$n]}.log
	"$KTLSD" --config "$T/$n.conf" --workers 2 --header "X-Node: $n" --drain-delay 600 \
		</dev/null >>"$log" 2>&1 &
	NODE_PID[$n]=$!
	echo "${NODE_PID[$n]}" >>"$T/pids"
	if wait_until 30 node_listening "$n" && wait_until 30 health_is "$n" 200; then
		return 0
	fi
	fail "start $n" "not serving on $a:$NPORT and $a:$SPORT after 30 s; log: $(tail -n 3 "$log" | tr '\n' ' ')"
	kill -KILL "${NODE_PID[$n]}" 2>/dev/null
	return 1
}

# stop_node NODE: SIGTERM, /healthz 503, SIGTERM again (ends the drain; two
# at once could merge into one), then exit 0 with a clean log.
stop_node() {
	local n=$1 pid=${NODE_PID[$1]}
	kill -TERM "$pid" 2>/dev/null
	wait_until 30 health_is "$n" 503
	kill -TERM "$pid" 2>/dev/null
	expect_exit0 "$pid" 120 "$n exits 0 after its drain (start ${NODE_STARTS[$n]})"
	check "$n: no sanitizer report (start ${NODE_STARTS[$n]})" sanitizer_clean "$T/$n.${NODE_STARTS[$n]}.log"
}

HAPROXY_PID=
stop_haproxy() {
	[ -n "$HAPROXY_PID" ] || return 0
	kill -TERM "$HAPROXY_PID" 2>/dev/null
	wait_exit "$HAPROXY_PID" 10 || kill -KILL "$HAPROXY_PID" 2>/dev/null
	HAPROXY_PID=
}
trap stop_haproxy EXIT

# hcurl ARGS...: curl to HAProxy's frontend, as kcurl is to a server.
hcurl() {
	curl -sS --max-time 60 --cacert "$FIX/ca.pem" --http1.1 \
		--resolve "localhost:$HPORT:127.0.0.1" "$@"
}

# node_of HEADERS: the node that answered (its X-Node field).
node_of() {
	hdr "$1" X-Node
}

# ---- the shipped files agree with each other ----
grace=$(conf_value "$DOC/ktlsd-node.conf" shutdown-grace)
delay=$(conf_value "$DOC/ktlsd-node.conf" drain-delay)
stop_after=$(sed -n 's/^TimeoutStopSec=//p' "$DOC/ktlsd-fleet.conf")
check "the systemd drop-in waits longer than drain-delay + shutdown-grace ($stop_after > $delay + $grace)" \
	test "${stop_after:-0}" -gt $((${delay:-0} + ${grace:-0}))
# Every server line says the same; the first one is read (two numbers
# would make the arithmetic below an error, and the check would not run).
inter=$(sed -n 's/.* inter \([0-9]*\)s .*/\1/p' "$DOC/haproxy.cfg" | head -n 1)
falls=$(sed -n 's/.* fall \([0-9]*\)\b.*/\1/p' "$DOC/haproxy.cfg" | head -n 1)
check "HAProxy sees a drain (inter ${inter}s x fall $falls) before the drain-delay ($delay s) ends" \
	test $((${inter:-99} * ${falls:-99})) -lt "${delay:-0}"

# ---- two nodes, HAProxy in front ----
start_node node1 || return 0
start_node node2 || return 0
render "$DOC/haproxy.cfg" "$T/haproxy.cfg" "bind :443" "bind 127.0.0.1:$HPORT" \
	192.0.2.11:8443 "127.0.0.11:$NPORT" 192.0.2.12:8443 "127.0.0.12:$NPORT" \
	"check port 9100" "check port $SPORT" ||
	{ fail "haproxy config" "cannot fill in $DOC/haproxy.cfg"; return 0; }
check "haproxy -c accepts doc/fleet/haproxy.cfg" haproxy -c -f "$T/haproxy.cfg"
haproxy -f "$T/haproxy.cfg" -db </dev/null >"$T/haproxy.log" 2>&1 &
HAPROXY_PID=$!
if ! wait_until 30 port_open "$HPORT"; then
	fail "haproxy starts" "not accepting on $HPORT after 30 s: $(tail -n 3 "$T/haproxy.log")"
	return 0
fi

# ---- the client's address reaches each node's access log ----
# Four requests from 127.0.0.3 and 127.0.0.4 (HAProxy reaches the nodes from
# 127.0.0.1): each is logged by the node that answered with the address it
# came from.
declare -A seen=()
for i in 1 2 3 4; do
	src=127.0.0.$((3 + i % 2))
	st=$(hcurl --interface "$src" -D "$T/addr$i.h" -o /dev/null -w '%{http_code}' "$URL/a.txt?addr=$i")
	n=$(node_of "$T/addr$i.h")
	expect_eq "request $i from $src through haproxy: 200" "$st" 200
	case $n in node1 | node2) ;; *)
		fail "request $i: answered by a node" "X-Node '$n'"
		continue
		;;
	esac
	seen[$n]=1
	wait_until 20 grep -qF "?addr=$i HTTP" "$T/$n.access.log"
	got=$(grep -F "?addr=$i HTTP" "$T/$n.access.log" | tail -n 1 | cut -d' ' -f1)
	expect_eq "... $n's access log shows the client $src" "$got" "$src"
done
check "both nodes answered some" test -n "${seen[node1]:-}" -a -n "${seen[node2]:-}"

# ---- session tickets: one key file, resumption on either node ----
# sclient TO ARGS...: openssl s_client to TO (ADDR:PORT) with a GET of
# /a.txt; sets NEGOTIATED ("New, TLSv1.3" / "Reused, TLSv1.3") and NODE.
sclient() {
	local to=$1 out=$T/sc.out
	shift
	: >"$out"
	# shellcheck disable=SC2094 # reading the file s_client writes is the point
	{
		printf 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
		wait_until 30 grep -qE 'aaaaaaaaaa|\(NONE\)|:error:|errno=' "$out"
	} | timeout 40 openssl s_client -connect "$to" -servername localhost "$@" >"$out" 2>&1
	NEGOTIATED=$(grep -m1 -E '^(New|Reused), ' "$out" | cut -d, -f1,2)
	NODE=$(tr -d '\r' <"$out" | sed -n 's/^X-Node: //p' | head -n 1)
}
start_ktlsd --tls-ticket-key-file "$T/other.key" || return 0
for v in 1_3 1_2; do
	V=TLSv${v/_/.}
	sclient "127.0.0.1:$HPORT" "-tls$v" -sess_out "$T/sess.$v"
	expect_eq "$V through haproxy: a full handshake" "$NEGOTIATED" "New, $V"
	first=$NODE
	# HAProxy picks the node; ask again until the other one answers.
	for _ in 1 2 3 4 5 6; do
		sclient "127.0.0.1:$HPORT" "-tls$v" -sess_in "$T/sess.$v"
		[ -n "$NODE" ] && [ "$NODE" != "$first" ] && break
	done
	expect_eq "$V: the session from $first resumes on the other node ($NODE)" \
		"$NEGOTIATED, $NODE" "Reused, $V, $([ "$first" = node1 ] && echo node2 || echo node1)"
	# shellcheck disable=SC2153 # PORT: start_ktlsd's
	sclient "127.0.0.1:$PORT" "-tls$v" -sess_in "$T/sess.$v"
	expect_eq "$V: ... but not on a node with another key file" "$NEGOTIATED" "New, $V"
done
stop_ktlsd

# ---- SIGTERM on node1 during downloads: HAProxy drains it ----
# download NAME RATE: big.bin through HAProxy, resuming with -C - where a
# node cuts it (up to 10 attempts); headers of attempt N in NAME.hN, the
# number of attempts in NAME.tries.
download() {
	local name=$1 rate=$2 try
	rm -f "$T/$name".*
	for try in 1 2 3 4 5 6 7 8 9 10; do
		if hcurl --max-time 200 --limit-rate "$rate" -C - -D "$T/$name.h$try" -o "$T/$name.b" \
			"$URL/big.bin?dl=$name" 2>>"$T/$name.err"; then
			echo "$try" >"$T/$name.tries"
			return 0
		fi
		sleep 1
	done
	echo failed >"$T/$name.tries"
}
# downloads_under_way NAME...: each has its first headers and 1 MiB.
downloads_under_way() {
	local d
	for d in "$@"; do
		[ -n "$(node_of "$T/$d.h1" 2>/dev/null)" ] && file_at_least "$T/$d.b" $((1 << 20)) || return 1
	done
}
# downloads_check NAME...: all complete and intact; sets ON_node1/ON_node2
# (the downloads each node began).
downloads_check() {
	local d tries
	ON_node1=()
	ON_node2=()
	for d in "$@"; do
		tries=$(cat "$T/$d.tries" 2>/dev/null)
		if [ "$tries" = failed ] || [ -z "$tries" ]; then
			fail "download $d" "failed after 10 attempts: $(tail -n 2 "$T/$d.err" | tr '\n' ' ')"
			continue
		fi
		expect_eq "download $d: intact (sha256, $tries attempt(s))" "$(sha "$T/$d.b")" "$want"
		case $(node_of "$T/$d.h1") in
		node1) ON_node1+=("$d") ;;
		node2) ON_node2+=("$d") ;;
		esac
	done
}

pids=()
for d in d1 d2 d3 d4; do
	download "$d" 2M &
	pids+=($!)
done
if wait_until 60 downloads_under_way d1 d2 d3 d4; then
	pass "four downloads under way through haproxy"
else
	fail "four downloads under way through haproxy" "not all started within 60 s"
fi
kill -TERM "${NODE_PID[node1]}"
if wait_until 60 grep -q "Server ktlsd/node1 is DOWN" "$T/haproxy.log"; then
	pass "SIGTERM on node1: haproxy's /healthz check takes it out"
else
	fail "SIGTERM on node1: haproxy's /healthz check takes it out" "no DOWN in its log after 60 s: $(tail -n 3 "$T/haproxy.log")"
fi
nodes=
for i in 1 2 3 4 5 6; do
	st=$(hcurl --interface 127.0.0.3 -D "$T/drain$i.h" -o /dev/null -w '%{http_code}' "$URL/a.txt?drain=$i")
	nodes+="$st $(node_of "$T/drain$i.h") "
done
expect_eq "new requests during the drain: all served by node2" "$nodes" "$(printf '200 node2 %.0s' 1 2 3 4 5 6)"
expect_eq "... while node1 still drains (/healthz 503)" "$(health node1)" 503
check "... and runs" kill -0 "${NODE_PID[node1]}"
# The second SIGTERM ends the drain: node1's listeners close and it exits
# once its downloads are done.
kill -TERM "${NODE_PID[node1]}"
wait "${pids[@]}"
downloads_check d1 d2 d3 d4
expect_ne "downloads had begun on node1" "${#ON_node1[@]}" 0
for d in "${ON_node1[@]}"; do
	expect_eq "download $d, on node1 at its SIGTERM: finished there, in one attempt" "$(cat "$T/$d.tries")" 1
done
expect_exit0 "${NODE_PID[node1]}" 60 "node1 exits 0 once its downloads are done"
check "node1: no sanitizer report" sanitizer_clean "$T/node1.1.log"
check "node1 logged the drain, then the stop" grep -q "SIGTERM: /healthz answers 503" "$T/node1.1.log"
check "... every download it began is logged complete" \
	test "$(grep -cE '"GET /big.bin\?dl=.* 200 [0-9]+ .*end=complete$' "$T/node1.access.log")" -eq "${#ON_node1[@]}"
for i in 1 2 3 4 5 6; do
	check "... request $i of the drain in node2's log, from 127.0.0.3" \
		wait_until 20 grep -qE "^127\.0\.0\.3 .*\?drain=$i HTTP" "$T/node2.access.log"
done

# ---- node2 dies during downloads: the cut ones resume on node1 ----
start_node node1 || return 0
if wait_until 60 grep -q "Server ktlsd/node1 is UP" "$T/haproxy.log"; then
	pass "node1 started again: haproxy takes it back"
else
	fail "node1 started again: haproxy takes it back" "no UP in its log after 60 s"
fi
pids=()
for d in e1 e2 e3 e4; do
	download "$d" 4M &
	pids+=($!)
done
wait_until 60 downloads_under_way e1 e2 e3 e4
kill -INT "${NODE_PID[node2]}"
wait_exit "${NODE_PID[node2]}" 30 || kill -KILL "${NODE_PID[node2]}"
wait "${pids[@]}"
downloads_check e1 e2 e3 e4
expect_ne "downloads had begun on node2" "${#ON_node2[@]}" 0
# A download whose every byte node2 had already handed to the kernel when
# SIGINT came is not cut: up to some 20 MB of the 32 MiB wait in the
# sockets and HAProxy's buffers between node2 and a client reading 4 MiB/s,
# and on a busy machine the signal comes later. It ends whole from node2;
# the others resume on node1, and at least one must have.
resumed=0
for d in "${ON_node2[@]}"; do
	tries=$(cat "$T/$d.tries")
	last=$T/$d.h$tries
	if [ "$tries" = 1 ]; then
		expect_eq "download $d, all sent before node2's SIGINT: whole from node2" \
			"$(head -n 1 "$last" | cut -d' ' -f2) $(node_of "$last")" "200 node2"
		continue
	fi
	resumed=$((resumed + 1))
	expect_eq "download $d, cut by node2's SIGINT: resumed with a range on node1" \
		"$(head -n 1 "$last" | cut -d' ' -f2) $(node_of "$last")" "206 node1"
done
expect_ne "a download cut by node2's SIGINT resumed on node1" "$resumed" 0
check "node2: no sanitizer report" sanitizer_clean "$T/node2.1.log"

stop_haproxy
stop_node node1
