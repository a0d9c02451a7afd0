# shellcheck shell=bash
# How tests/uml/run picks the guest kernel for the kTLS tests, with stand-ins
# for the guests: a linux.uml that panics before init, as Debian's UML 6.1
# does on some Intel Xeon hosts, and a qemu-system-x86_64 whose guest passes
# one check (or never reaches init). No kTLS suite run must never look like a
# pass: it fails, or with KTLSD_ALLOW_NO_KTLS=1 is a counted skip; a QEMU that
# is set up but does not boot fails either way. (The real guests run in
# scripts/test's kTLS part.)

# shellcheck disable=SC2154 # top_srcdir is set by run
UML_RUN="$top_srcdir/tests/uml/run"

mkdir -p "$T/bin" "$T/qemu/FAKE-1.0"
cat >"$T/linux.uml" <<'EOF'
#!/bin/sh
echo "userspace - ptrace set fp regs failed, errno = 14"
echo "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b"
kill -ABRT $$
EOF
# The guest's side of the contract with tests/uml/run: results/booted, the
# guest-tests output, its exit code, in the TESTDIR named on -append.
cat >"$T/bin/qemu-boots" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do
	[ "$1" = -append ] && append=$2
	shift
done
for w in $append; do
	case $w in TESTDIR=*) r=${w#TESTDIR=}/results ;; esac
done
echo booted >"$r/booted"
printf 'ok stand-in guest check\n1 passed, 0 failed, 0 skipped\n' >"$r/guest.out"
echo 0 >"$r/guest.rc"
EOF
# The same guest, whose guest-tests also hit a shell error.
sed 's|^echo 0 >|echo "/mnt/ktlsd/guest-tests: line 7: [: too many arguments" >"$r/guest.err"; echo 0 >|' \
	"$T/bin/qemu-boots" >"$T/bin/qemu-shellerr"
printf '#!/bin/sh\necho "SeaBIOS (stand-in)"\nexec sleep 60\n' >"$T/bin/qemu-hangs"
chmod 755 "$T/linux.uml" "$T/bin/qemu-boots" "$T/bin/qemu-shellerr" "$T/bin/qemu-hangs"
echo FAKE-1.0 >"$T/qemu/FAKE-1.0/ready"
ln -s FAKE-1.0 "$T/qemu/current"

# uml_run NAME QEMU ENV...: tests/uml/run with the panicking UML, QEMU the
# stand-in ("none": no QEMU guest kernel at all), and ENV. Sets RUN_RC and
# RUN_OUT (its output file).
uml_run() {
	local name=$1 qemu=$2 cache=$T/qemu
	shift 2
	RUN_OUT="$T/$name.out"
	rm -f "$T/bin/qemu-system-x86_64"
	case $qemu in
	none) cache=$T/no-qemu ;;
	*) ln -s "$qemu" "$T/bin/qemu-system-x86_64" ;;
	esac
	env -u KTLSD_ALLOW_NO_KTLS -u KTLS_VM PATH="$T/bin:$PATH" LINUX_UML="$T/linux.uml" \
		KTLSD_QEMU_CACHE="$cache" KTLS_BOOT_WAIT=3 "$@" \
		timeout 100 "$UML_RUN" "$KTLSD" >"$RUN_OUT" 2>&1 </dev/null
	RUN_RC=$?
}
last_line() {
	tail -n 1 "$RUN_OUT"
}

uml_run none none
expect_eq "no guest can boot: tests/uml/run fails" "$RUN_RC" 1
check "... and says why, naming the UML that did not reach init" \
	grep -qE '^FAIL kTLS guest suite: no guest kernel could run here .*linux.uml did not reach init' "$RUN_OUT"
expect_match "... in its closing line" "$(last_line)" '^[0-9]+ passed, 1 failed, 0 skipped$'

uml_run allowed none KTLSD_ALLOW_NO_KTLS=1
expect_eq "KTLSD_ALLOW_NO_KTLS=1, no guest can boot: exit 0" "$RUN_RC" 0
check "... a named skip" grep -qE '^SKIP kTLS guest suite: no guest kernel could run here' "$RUN_OUT"
expect_match "... counted as a skip, not a pass" "$(last_line)" '^[0-9]+ passed, 0 failed, 1 skipped$'

uml_run fallthrough "$T/bin/qemu-boots"
expect_eq "UML does not boot, QEMU does: exit 0" "$RUN_RC" 0
check "... the guest is QEMU's" grep -qx '# guest: qemu-tcg FAKE-1.0' "$RUN_OUT"
check "... its check is counted" grep -qx 'ok stand-in guest check' "$RUN_OUT"
expect_match "... and the guest's summary line is not passed through" \
	"$(grep -cE '^[0-9]+ passed' "$RUN_OUT")" '^1$'

uml_run shellerr "$T/bin/qemu-shellerr"
expect_eq "a shell error in guest-tests: tests/uml/run fails" "$RUN_RC" 1
check "... naming the line" \
	grep -qx 'FAIL guest-tests shell error: guest-tests: line 7: \[: too many arguments' "$RUN_OUT"
expect_match "... in its closing line" "$(last_line)" '^[0-9]+ passed, 1 failed, 0 skipped$'

uml_run qemu-hangs "$T/bin/qemu-hangs" KTLS_VM=qemu KTLSD_ALLOW_NO_KTLS=1
expect_eq "QEMU set up but not booting: a failure, even with KTLSD_ALLOW_NO_KTLS=1" "$RUN_RC" 1
expect_eq "... after booting it twice" "$(grep -c '^# booting qemu-tcg FAKE-1.0' "$RUN_OUT")" 2
check "... named" grep -qE '^FAIL kTLS guest suite: qemu-tcg FAKE-1.0 did not reach init in two boots' "$RUN_OUT"

env LINUX_UML="$T/linux.uml" KTLSD_QEMU_CACHE="$T/no-qemu" KTLS_VM=kvm \
	timeout 100 "$UML_RUN" "$KTLSD" >"$T/bad-vm.out" 2>&1 </dev/null
expect_eq "KTLS_VM=kvm: a usage error" "$?" 2
