# shellcheck shell=bash
# timeout: 240
# bench/run --smoke: the benchmark harness runs end to end on a tiny matrix
# (ktlsd and nginx, 1 KiB and 1 MiB files, 2 s per cell) and writes a
# well-formed results.csv and report.md. Asserts no speed. Skipped (and
# counted as a skip) when nginx, wrk or h2load is missing: bench/run
# installs those itself, the test suite does not. A run stopped
# by SIGTERM still writes its (partial) report. The slow-client cell, 20
# clients for 12 s, gives its steady rows one a window.

missing=
for c in nginx wrk h2load; do
	command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || missing="$missing $c"
done
if [ -n "$missing" ]; then
	skip "bench smoke" "not installed:$missing (bench/run --quick installs them)"
	return 0
fi

out="$T/bench"
# shellcheck disable=SC2154 # top_srcdir is set by run
timeout 55 "$top_srcdir/bench/run" --smoke --ktlsd "$KTLSD" --out "$out" >"$T/bench.log" 2>&1
expect_eq "bench/run --smoke: exit code" "$?" 0

csv="$out/results.csv"
check "results.csv exists" test -s "$csv"
expect_eq "results.csv header" "$(head -n1 "$csv" 2>/dev/null)" \
	"group,cell,server,metric,unit,median,min,max,reps,server_cpu_util,per_cpu_median,per_cpu_unit,bound,other_load,client_busy,verified,note"
# Every row has the header's 17 fields (quoted fields may hold commas).
bad=$(/usr/bin/python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
print(sum(1 for r in rows if len(r) != len(rows[0])))' "$csv" 2>&1)
expect_eq "results.csv: every row has every field" "$bad" 0
for s in ktlsd nginx; do
	n=$(cut -d, -f3 "$csv" 2>/dev/null | grep -cx "$s")
	expect_match "results.csv: rows for $s" "$n" '^[1-9][0-9]*$'
done
# Whatever the speed, ktlsd's bytes were checked and correct.
n=$(grep -c ',ktlsd,.*,FAIL,' "$csv" 2>/dev/null)
expect_eq "results.csv: no ktlsd cell failed its byte check" "$n" 0

md="$out/report.md"
check "report.md exists" test -s "$md"
check "report.md: ratio table heading" grep -q '^## ktlsd / best peer, every cell' "$md"
check "report.md: ratio table header row" grep -q '^| cell | metric | ktlsd | best peer | ktlsd / best |' "$md"
n=$(grep -c '^| handshake \|^| 1KiB \|^| 1m.bin \|^| plain ' "$md")
expect_match "report.md: ratio rows for the smoke cells" "$n" '^([4-9]|[1-9][0-9]+)$'
check "report.md: versions section" grep -q '^### Versions and machine' "$md"

# A run that is stopped (SIGTERM, Ctrl-C, a CI timeout) still writes its
# report from the cells measured so far, marked partial. Three repetitions:
# the signal comes after the first row, and one repetition's run (some
# 18 s) once exited 0 with a whole report in a full suite, as if it had
# ended before the signal (not seen again by hand); three leave some 45 s
# of cells after that row.
out2="$T/bench-stopped"
"$top_srcdir/bench/run" --smoke --reps 3 --ktlsd "$KTLSD" --out "$out2" >"$T/bench-stopped.log" 2>&1 &
bpid=$!
wait_until 60 sh -c 'test "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge 2' sh "$out2/raw.csv"
kill -TERM "$bpid"
wait "$bpid"
expect_eq "a bench/run stopped by SIGTERM: exit code" "$?" 130
check "... still writes report.md" test -s "$out2/report.md"
check "... marked as a partial run" grep -q '^\*\*Partial run:\*\* Interrupted' "$out2/report.md"
n=$(cut -d, -f3 "$out2/results.csv" 2>/dev/null | grep -cx ktlsd)
expect_match "... with the cells measured before the signal" "$n" '^[1-9][0-9]*$'

# The slow-client cell, small: every server's steady figure and memory are
# rows of their own per window (lib/slow.sh), so the report has a median,
# min and max of several, where a window wrote anything.
out3="$T/bench-slow"
timeout 100 "$top_srcdir/bench/run" --smoke --slow-only --slow 20 --slow-protocols h1 --slow-seconds 12 \
	--ktlsd "$KTLSD" --out "$out3" >"$T/bench-slow.log" 2>&1
expect_eq "bench/run --slow-only, 20 clients for 12 s: exit code" "$?" 0
n=$(grep -c '^slow,slow h1 20x64KiB/s,ktlsd,1,pss_per_dl,' "$out3/raw.csv" 2>/dev/null)
expect_eq "... ktlsd's memory read in the first window" "$n" 1
n=$(awk -F, '$1 == "slow" && $3 == "ktlsd" && $5 == "pss_per_dl"' "$out3/raw.csv" 2>/dev/null | wc -l)
expect_eq "... and in each of the five" "$n" 5
n=$(awk -F, '$1 == "slow" && $3 == "ktlsd" && $5 == "cpu_s_per_gb_steady"' "$out3/raw.csv" 2>/dev/null | wc -l)
expect_eq "... a steady CPU row a window" "$n" 5
check "... its verdict is the byte check's, not FAIL" \
	grep -q '^slow,slow h1 20x64KiB/s,ktlsd,pss_per_dl_ready,.*,sha256+size,' "$out3/results.csv"
check "... the report's slow table gives the windows' range" \
	grep -qE '^\| slow h1 20x64KiB/s \| ktlsd \| 20 \| [^|]* / [^|]* / [^|]*\[[^|]* - [^|]*\] \|' "$out3/report.md"
