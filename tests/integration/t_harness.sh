# shellcheck shell=bash
# The harness itself: a check that cannot run here is a skip, printed as
# "SKIP NAME: why" and counted apart, never as a pass, by this harness
# (lib.sh's skip, run's closing line) and by tests/tally, which adds up the
# logs of every part for scripts/test's closing line.

# shellcheck disable=SC2154 # top_srcdir is set by run
TALLY="$top_srcdir/tests/tally"
here_dir=$(dirname "${BASH_SOURCE[0]}")

# ---- run and lib.sh, on a test file of their own ------------------------------
h="$T/harness"
mkdir -p "$h"
cp "$here_dir/run" "$here_dir/lib.sh" "$here_dir/lib.py" "$h/"
cat >"$h/t_sample.sh" <<'EOF'
pass "a check that ran"
skip "a check that cannot run here" "no such tool"
EOF
env -u KEEP_WORK TMPDIR="$T" timeout 100 "$h/run" t_sample >"$T/sample.out" 2>&1 </dev/null
expect_eq "a file with a pass and a skip: the harness exits 0" "$?" 0
check "... prints the skip as SKIP FILE: NAME: why" \
	grep -qx 'SKIP t_sample: a check that cannot run here: no such tool' "$T/sample.out"
check "... the file's line counts it as a skip" \
	grep -qE '^# t_sample: 1 passed, 0 failed, 1 skipped \(' "$T/sample.out"
expect_eq "... and so does the closing line" "$(tail -n 1 "$T/sample.out")" "1 passed, 0 failed, 1 skipped"

# A shell error in a test file: bash prints it and goes on, and nothing else
# would say that the check it stood in for never ran.
cat >"$h/t_shellerr.sh" <<'EOF'
two="2 2"
[ $two -lt 10 ] && pass "a check behind a broken test"
pass "a check after it"
EOF
env -u KEEP_WORK TMPDIR="$T" timeout 100 "$h/run" t_shellerr >"$T/shellerr.out" 2>&1 </dev/null
expect_eq "a file with a shell error: the harness exits 1" "$?" 1
check "... and prints it as FAIL FILE: shell error: the line" \
	grep -qx 'FAIL t_shellerr: shell error: t_shellerr.sh: line 2: \[: too many arguments' "$T/shellerr.out"
expect_eq "... which the closing line counts" "$(tail -n 1 "$T/shellerr.out")" "1 passed, 1 failed, 0 skipped"

# ---- tests/tally -----------------------------------------------------------------
# A unit test (Check) that left out one test and said so; a harness log whose
# closing line counts its own SKIP lines; an old-style harness line.
printf 'SKIP test_x: test_y: tmpfs\nRunning suite(s): x\n100%%: Checks: 3, Failures: 0, Errors: 0\n' >"$T/unit.log"
printf 'Running suite(s): z\n50%%: Checks: 4, Failures: 1, Errors: 1\n' >"$T/unit2.log"
printf 'ok a\nSKIP t_a: b: why\nSKIP t_a: c: why\nFAIL t_a: d: why\n1 passed, 1 failed, 2 skipped\n' >"$T/harness.log"
printf 'ok a\nok b\n2 passed, 0 failed\n' >"$T/old.log"
expect_eq "tally: a unit test's SKIP line is a skip, not a pass" "$("$TALLY" "$T/unit.log")" "3 0 1"
expect_eq "tally: Check's failures and errors" "$("$TALLY" "$T/unit2.log")" "2 2 0"
expect_eq "tally: a harness's skips are counted once" "$("$TALLY" "$T/harness.log")" "1 1 2"
expect_eq "tally: N passed, N failed without skips" "$("$TALLY" "$T/old.log")" "2 0 0"
expect_eq "tally: all of them, and a missing file" \
	"$("$TALLY" "$T/unit.log" "$T/nothing.log" "$T/harness.log" "$T/unit2.log" "$T/old.log")" "8 3 3"

# ---- no check calls a skip a pass ------------------------------------------------
# What each of them said when it passed instead: "...; skipped", "not
# measured under AddressSanitizer", "no provided-buffer ring".
expect_eq "no integration check passes for a check it did not run" \
	"$(grep -nE '\bpass "[^"]*(skipped|not measured|no provided-buffer ring|needs root)' "$here_dir"/t_*.sh)" ""
