# shellcheck shell=bash
# The servers under test: how each one is configured and started.
#
# A server is "NAME:KIND:BINARY": KIND is ktlsd, nginx (also any
# nginx-compatible binary given with --peer, such as Angie), h2o, lighttpd
# or caddy; or nginx-aio, the same binary and template as nginx plus
# "aio threads" (file reads in a thread pool; the cold-file cell's second
# nginx). Every server gets the same job: one worker on $SERVER_CPU,
# serving $ROOT over HTTPS (TLS 1.2 and 1.3, the three AEADs; the client
# picks which) and plain HTTP, one certificate, no access log, a session
# cache and tickets, long keep-alive, sendfile where it has one, and kTLS
# only where the run asks for it. The filled-in configs are kept in
# $OUT/configs/ for the report.

TLS12_CIPHERS=ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305
TLS13_SUITES=TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256

srv_name() { echo "${1%%:*}"; }
srv_kind() {
	local r=${1#*:}
	echo "${r%%:*}"
}
srv_bin() { echo "${1#*:*:}"; }

# fill TEMPLATE OUTFILE KEY=VALUE...: copy TEMPLATE with every @KEY@
# replaced by VALUE.
fill() {
	local tpl=$1 out=$2 kv
	shift 2
	cp "$tpl" "$out"
	for kv in "$@"; do
		local k=${kv%%=*} v=${kv#*=}
		v=${v//\\/\\\\}
		v=${v//|/\\|}
		v=${v//&/\\&}
		sed -i "s|@$k@|$v|g" "$out"
	done
}

# srv_start SERVER CERT SENDFILE KTLS: start SERVER (NAME:KIND:BINARY) with
# certificate CERT (ec|rsa), sendfile on|off and kTLS on|off. Sets SRV_PID,
# SRV_PORT (HTTPS), SRV_PLAIN (HTTP), SRV_RUN (its scratch folder, with its
# error log) and SRV_CONF (the config file, if any). Returns 1 if it does not
# come up. KTLSD_EXTRA (an array, usually empty) adds flags for servers of
# kind ktlsd (ktlsd and ktlsd-base alike), e.g. (--user nobody).
srv_start() {
	local _
	for _ in 1 2 3; do
		srv_start_once "$@" && return 0
		# Someone took the port between the probe and the bind: try again.
		grep -qi 'in use' "$SRV_RUN"/*.log 2>/dev/null || return 1
	done
	return 1
}

srv_start_once() {
	local srv=$1 cert=$2 sendfile=$3 ktls=$4
	local name kind bin tag
	name=$(srv_name "$srv")
	kind=$(srv_kind "$srv")
	bin=$(srv_bin "$srv")
	tag="$name-$cert-sf$sendfile-ktls$ktls"
	[ ${#KTLSD_EXTRA[@]} -gt 0 ] && [ "$kind" = ktlsd ] && tag="$tag-extra"
	SRV_RUN="$WORK/run/$tag.$RANDOM"
	mkdir -p "$SRV_RUN/tmp"
	# Servers that drop privileges to nobody still write their logs here.
	chmod 1777 "$SRV_RUN" "$SRV_RUN/tmp"
	SRV_PORT=$(freeport) || return 1
	SRV_PLAIN=$(freeport) || return 1
	SRV_CONF=
	local crt="$WORK/certs/$cert.pem" key="$WORK/certs/$cert.key"
	case $kind in
	ktlsd)
		local ktls_flag=off
		[ "$ktls" = on ] && ktls_flag=on
		SRV_ARGS=(--root "$ROOT" --listen "127.0.0.1:$SRV_PORT"
			--listen-plain "127.0.0.1:$SRV_PLAIN" --cert "$crt" --key "$key"
			--workers 1 --ktls "$ktls_flag" --sendfile "$sendfile"
			--tls-protocols "TLSv1.2 TLSv1.3" --tls12-ciphers "$TLS12_CIPHERS"
			--tls13-ciphersuites "$TLS13_SUITES" --tls-session-cache 20000
			--keepalive-requests 1000000 --access-log off
			--error-log "$SRV_RUN/error.log" "${KTLSD_EXTRA[@]}")
		SRV_CONF="$OUT/configs/$tag.args"
		printf '%q ' "$bin" "${SRV_ARGS[@]}" >"$SRV_CONF"
		taskset -c "$SERVER_CPU" "$bin" "${SRV_ARGS[@]}" </dev/null >"$SRV_RUN/stdout.log" 2>&1 &
		SRV_PID=$!
		;;
	nginx | nginx-aio)
		local ktls_line='' aio_line=''
		[ "$ktls" = on ] && ktls_line="ssl_conf_command Options KTLS;"
		# File reads (and sendfile) in the default thread pool, 32 threads
		# (nginx's documentation of the aio and thread_pool directives),
		# so the worker does not wait for the disk.
		[ "$kind" = nginx-aio ] && aio_line="aio threads;"
		SRV_CONF="$SRV_RUN/nginx.conf"
		fill "$HERE/conf/nginx.conf.in" "$SRV_CONF" RUN="$SRV_RUN" SENDFILE="$sendfile" \
			CERT="$crt" KEY="$key" PROTOCOLS="TLSv1.2 TLSv1.3" CIPHERS12="$TLS12_CIPHERS" \
			CIPHERS13="$TLS13_SUITES" KTLS="$ktls_line" AIO="$aio_line" PORT="$SRV_PORT" \
			PLAINPORT="$SRV_PLAIN" H2=http2 ROOT="$ROOT"
		taskset -c "$SERVER_CPU" "$bin" -p "$SRV_RUN" -c "$SRV_CONF" -e "$SRV_RUN/error.log" \
			</dev/null >"$SRV_RUN/stdout.log" 2>&1 &
		SRV_PID=$!
		;;
	h2o)
		SRV_CONF="$SRV_RUN/h2o.conf"
		fill "$HERE/conf/h2o.conf.in" "$SRV_CONF" RUN="$SRV_RUN" CERT="$crt" KEY="$key" \
			CIPHERS12="$TLS12_CIPHERS" PORT="$SRV_PORT" PLAINPORT="$SRV_PLAIN" ROOT="$ROOT"
		taskset -c "$SERVER_CPU" "$bin" -c "$SRV_CONF" </dev/null >"$SRV_RUN/stdout.log" 2>&1 &
		SRV_PID=$!
		;;
	lighttpd)
		local nb=sendfile ko=
		[ "$sendfile" = off ] && nb=writev
		[ "$ktls" = on ] && ko=",KTLS"
		SRV_CONF="$SRV_RUN/lighttpd.conf"
		fill "$HERE/conf/lighttpd.conf.in" "$SRV_CONF" RUN="$SRV_RUN" CERT="$crt" KEY="$key" \
			CIPHERS12="$TLS12_CIPHERS" CIPHERS13="$TLS13_SUITES" PORT="$SRV_PORT" \
			PLAINPORT="$SRV_PLAIN" ROOT="$ROOT" NETBACKEND="$nb" KTLSOPT="$ko" H2=enable
		taskset -c "$SERVER_CPU" "$bin" -D -f "$SRV_CONF" </dev/null >"$SRV_RUN/stdout.log" 2>&1 &
		SRV_PID=$!
		;;
	caddy)
		SRV_CONF="$SRV_RUN/Caddyfile"
		fill "$HERE/conf/Caddyfile.in" "$SRV_CONF" CERT="$crt" KEY="$key" PORT="$SRV_PORT" \
			PLAINPORT="$SRV_PLAIN" ROOT="$ROOT" CADDYPROTOS="h1 h2"
		GOMAXPROCS=1 HOME="$SRV_RUN" XDG_DATA_HOME="$SRV_RUN" XDG_CONFIG_HOME="$SRV_RUN" \
			taskset -c "$SERVER_CPU" "$bin" run --adapter caddyfile --config "$SRV_CONF" \
			</dev/null >"$SRV_RUN/stdout.log" 2>&1 &
		SRV_PID=$!
		;;
	*)
		log "unknown server kind '$kind' in $srv"
		return 1
		;;
	esac
	if [ -n "$SRV_CONF" ] && [ "$SRV_CONF" != "$OUT/configs/$tag.args" ]; then
		cp "$SRV_CONF" "$OUT/configs/$tag.$(basename "$SRV_CONF")"
	fi
	if ! wait_port "$SRV_PORT" 10 "$SRV_PID" || ! wait_port "$SRV_PLAIN" 5 "$SRV_PID"; then
		log "$name did not start; its log: $(tail -n 5 "$SRV_RUN"/*.log 2>/dev/null | tr '\n' ' ')"
		kill -KILL "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
		return 1
	fi
	echo "$SRV_PID" >>"$WORK/pids"
	return 0
}

# srv_stop [wait]: stop the server started last. With "wait", wait for it
# to exit (ktlsd prints its counters on the way out); otherwise let it
# finish in the background (ktlsd takes a few seconds to exit).
srv_stop() {
	local pid=$SRV_PID i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	if [ "${1:-}" = wait ]; then
		for ((i = 0; i < 200; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	else
		(sleep 15 && kill -KILL "$pid" 2>/dev/null) >/dev/null 2>&1 &
	fi
	SRV_PID=
}

# srv_version SERVER: one line naming its version.
srv_version() {
	local bin kind
	bin=$(srv_bin "$1")
	kind=$(srv_kind "$1")
	case $kind in
	ktlsd) "$bin" --version 2>&1 | head -n1 ;;
	nginx | nginx-aio) "$bin" -V 2>&1 | head -n 2 | tr '\n' ' ' ;;
	h2o) "$bin" -v 2>&1 | head -n 2 | tr '\n' ' ' ;;
	lighttpd) "$bin" -v 2>&1 | head -n1 ;;
	caddy) "$bin" version 2>&1 | head -n1 ;;
	esac
}

# srv_speaks_h2 PORT: the server at PORT negotiates HTTP/2 through ALPN.
srv_speaks_h2() {
	local v
	v=$(curl -sk --http2 -o /dev/null -w '%{http_version}' --max-time 5 \
		"https://127.0.0.1:$1/1k.bin" 2>/dev/null)
	[ "$v" = 2 ]
}
