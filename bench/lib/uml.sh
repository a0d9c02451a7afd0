# shellcheck shell=bash
# The kTLS matrix, in user-mode Linux (shared/KTLS-UML.md): the host kernel
# here has no kernel TLS, Debian's linux.uml has it as a module. One boot
# runs ktlsd (and ktlsd-base, with --ktlsd-baseline) and nginx through
# kTLS on/off x sendfile on/off x HTTP/1.1 and HTTP/2 (bench/uml/guest.sh);
# its rows are added to raw.csv.
#
# The guest sees the host's file system but mounts tmpfs over /tmp, /run and
# /dev/shm, so everything it needs is copied to a folder outside those.

uml_matrix() {
	local uml
	uml=$(command -v linux.uml || echo /usr/bin/linux.uml)
	if [ ! -x "$uml" ] || [ ! -d /usr/lib/uml/modules ]; then
		log "kTLS matrix skipped: user-mode-linux is not installed"
		SERVER=ktlsd:ktlsd:x REP=1 na_row ktls "kTLS matrix" records_per_mib records/MiB "user-mode-linux not installed"
		return
	fi
	local nginx mib=8
	nginx=$(command -v nginx || echo /usr/sbin/nginx)
	[ "$MODE" = full ] && mib=64
	local servers=ktlsd
	[ -n "$KTLSD_BASE_BIN" ] && servers="$servers,ktlsd-base"
	[ -x "$nginx" ] && servers="$servers,nginx"
	local d
	d=$(mktemp -d /var/tmp/ktlsd-bench-uml.XXXXXX) || return
	mkdir -p "$d/results" "$d/tools" "$d/conf" "$d/certs" "$d/uml"
	cp "$KTLSD_BIN" "$d/ktlsd"
	[ -n "$KTLSD_BASE_BIN" ] && cp "$KTLSD_BASE_BIN" "$d/ktlsd-base"
	cp "$HERE/tools/tlsfetch.py" "$HERE/tools/strace_cost.py" "$d/tools/"
	cp "$HERE/conf/nginx.conf.in" "$d/conf/"
	cp "$WORK/certs/ec.pem" "$WORK/certs/ec.key" "$d/certs/"
	cp "$HERE/uml/init" "$HERE/uml/guest.sh" "$d/"
	chmod 755 "$d" "$d/init"
	fill "$HERE/conf/client-openssl.cnf.in" "$d/client.cnf" TLSV=TLSv1.3 \
		CIPHERS12=ECDHE-ECDSA-AES128-GCM-SHA256 CIPHERS13=TLS_AES_128_GCM_SHA256
	log "kTLS matrix in user-mode Linux: $servers, $mib MiB file (about $((mib / 4 + 40)) s per server)"
	note_cmd "linux.uml mem=1G root=/dev/root rootfstype=hostfs rw init=bench/uml/init BENCHDIR=... MIB=$mib SERVERS='$servers'   # kTLS matrix (bench/uml/guest.sh)"
	# UML is uniprocessor: client and server share its one CPU. Pin the
	# whole guest to the server's core like every other server.
	timeout -k 5 900 taskset -c "$SERVER_CPU" "$uml" mem=1G root=/dev/root rootfstype=hostfs rw \
		init="$d/init" quiet con=null con0=null,fd:1 umid="kb$$" uml_dir="$d/uml/" \
		BENCHDIR="$d" MIB="$mib" NGINX="$nginx" SERVERS="$servers" GUEST_TIMEOUT=800 \
		</dev/null >"$d/results/console.log" 2>&1
	mkdir -p "$OUT/uml"
	cp "$d"/results/* "$OUT/uml/" 2>/dev/null
	if [ ! -f "$d/results/guest.rc" ]; then
		log "kTLS matrix: the guest did not finish (see uml/console.log)"
	fi
	if [ -s "$d/results/rows.csv" ]; then
		cat "$d/results/rows.csv" >>"$OUT/raw.csv"
	else
		SERVER=ktlsd:ktlsd:x REP=1 na_row ktls "kTLS matrix" records_per_mib records/MiB "the guest produced no rows (see uml/)"
	fi
	rm -rf "$d"
}
