# shellcheck shell=bash
# The default TLS configuration, as testssl.sh (Debian's package) sees it:
# no weak protocol, no weak cipher, no known vulnerability. Both the ECDSA
# and the RSA certificate are loaded, so RSA-specific checks (ROBOT, DROWN)
# run too.

if ! command -v testssl >/dev/null 2>&1; then
	skip "testssl.sh" "not installed (scripts/install-deps installs it)"
	return 0
fi
start_ktlsd || return 0

json="$T/testssl.json"
timeout 240 testssl --quiet --color 0 --warnings off --protocols --std --vulnerable \
	--jsonfile-pretty "$json" --ip 127.0.0.1 "https://localhost:$PORT" >"$T/testssl.out" 2>&1
check "testssl.sh ran and wrote its findings" test -s "$json"

# Every finding of the protocol, cipher and vulnerability sections must be
# OK or INFO; anything LOW or worse is named in the failure.
findings=$("$PY" - "$json" <<'PY'
import json, sys
scan = json.load(open(sys.argv[1]))["scanResult"][0]
bad = [f"{f['id']}={f['severity']}:{f['finding']}"
       for k in ("protocols", "ciphers", "vulnerabilities")
       for f in scan.get(k, [])
       if f["severity"] not in ("OK", "INFO")]
count = sum(len(scan.get(k, [])) for k in ("protocols", "ciphers", "vulnerabilities"))
print(count, "; ".join(bad))
PY
)
checked=${findings%% *}
weak=${findings#* }
[ "$weak" = "$findings" ] && weak=""
check "testssl.sh examined protocols, ciphers and vulnerabilities (>20 findings)" test "${checked:-0}" -gt 20
expect_eq "testssl.sh reports nothing weak or vulnerable" "$weak" ""
stop_ktlsd
