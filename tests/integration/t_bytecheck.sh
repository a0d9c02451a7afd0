# shellcheck shell=bash
# timeout: 420
# No byte of one response reaches another connection, or another place of
# its own (issue 20: an HTTP/2 batch that left while its file reads were
# still filling it carried whatever its pooled buffer held before, another
# client's file among it). bytecheck (bytecheck.c) downloads files whose
# every 16 bytes name the file and the offset, over HTTP/1.1 and HTTP/2,
# many clients at once, from files the page cache holds and files it does
# not (evicted before the request, so that the server's reads wait for the
# disk), and ends each download at a random moment: close_notify, a TLS 1.3
# KeyUpdate, RST, FIN, RST_STREAM, a flow-control window held shut. Every
# body byte that arrives is checked against its file at its offset.
#
# 10,000 downloads in all (4,000 with ktlsd sealing TLS records, 3,000 with
# OpenSSL sealing them, 3,000 over plain HTTP); 3,000 under the sanitizers'
# build, which also poisons pooled buffers when they go back, so stale bytes
# cannot look like the right ones. The kTLS guest runs it too
# (tests/uml/guest-tests). The seed is printed: BYTECHECK_SEED=N repeats a
# run.

BYTECHECK=$(dirname "$KTLSD")/tests/integration/bytecheck
if [ ! -x "$BYTECHECK" ]; then
	fail "bytecheck is built" "$BYTECHECK is missing (make check builds it)"
	return 0
fi
if ldd "$KTLSD" 2>/dev/null | grep -q libasan; then
	n_seal=1200 n_openssl=900 n_plain=900
else
	n_seal=4000 n_openssl=3000 n_plain=3000
fi
seed=${BYTECHECK_SEED:-$RANDOM}
echo "# bytecheck seed $seed (BYTECHECK_SEED=$seed repeats this run)"

# The files live where this test's scratch folder is: a real disk, so that
# evicting them works (not on tmpfs, which has no disk to read from).
files=$T/files
mkdir -p "$files"
"$BYTECHECK" gen "$files" 48 524288 "$seed" ||
	fail "bytecheck gen" "could not write $files"
cold=30
"$BYTECHECK" cold "$files" >"$T/cold.out" 2>&1
case $? in
0) ;;
1)
	skip "bytecheck: files the page cache does not hold" \
		"$T is on a file system whose pages cannot be evicted ($(cat "$T/cold.out")); only cached files are downloaded"
	cold=0
	;;
*)
	fail "bytecheck: can files be evicted here" "$(head -c 300 "$T/cold.out")"
	cold=0
	;;
esac

# bytecheck_run NAME N ARGS...: N downloads by bytecheck against the server
# started last; its summary must show all N made, no foreign byte and no
# protocol error.
bytecheck_run() {
	local name=$1 n=$2 out rc
	shift 2
	out=$("$BYTECHECK" run --dir "$files" --procs 6 --cold "$cold" --seed "$seed" \
		--attempts "$n" "$@" 2>"$T/$name.err")
	rc=$?
	echo "# $name: $out"
	if [ $rc -eq 0 ] && printf '%s' "$out" |
		grep -Eq "^attempts=$n .* foreign=0 errors=0 .* crashed=0$"; then
		pass "$name: every body byte is its file's at its offset ($out)"
	else
		fail "$name: every body byte is its file's at its offset" \
			"exit $rc: $out; first problems: $(head -n 3 "$T/$name.err")"
	fi
}

tls_args=(--root "$files" --cert "$FIX/ec.pem" --key "$FIX/ec.key" --workers 2)
if start_on_free_port "${tls_args[@]}" --tls-records ktlsd; then
	bytecheck_run "ktlsd seals" "$n_seal" --port "$PORT" --tls --h1 --h2
	stop_ktlsd
fi
if start_on_free_port "${tls_args[@]}" --tls-records openssl; then
	bytecheck_run "OpenSSL seals" "$n_openssl" --port "$PORT" --tls --h1 --h2
	stop_ktlsd
fi
plain_port=$(freeport)
if start_on_free_port "${tls_args[@]}" --listen-plain "127.0.0.1:$plain_port"; then
	bytecheck_run "plain HTTP" "$n_plain" --port "$plain_port" --plain --h1
	stop_ktlsd
fi
