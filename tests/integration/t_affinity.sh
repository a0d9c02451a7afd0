# shellcheck shell=bash
# Workers honour the CPUs the process may use (taskset, systemd's
# CPUAffinity=): each is pinned inside that set, and the default worker count
# is the set's size, not the machine's CPU count.

if ! taskset -c 1 true 2>/dev/null; then
	skip "worker pinning (taskset -c 1)" "this machine has no usable CPU 1"
	return 0
fi

# thread_cpus PID: "COMM=Cpus_allowed_list" for each thread of PID.
thread_cpus() {
	local t
	for t in /proc/"$1"/task/*; do
		printf '%s=%s\n' "$(cat "$t/comm")" "$(awk '/^Cpus_allowed_list:/ {print $2}' "$t/status")"
	done 2>/dev/null
}

mask=$(taskset -pc $BASHPID | sed 's/.*: //')
for workers in 0 3; do
	want=$workers
	[ "$workers" -eq 0 ] && want=1
	name="taskset -c 1, --workers $workers"
	# What this shell starts inherits its CPU set, as under taskset -c 1.
	taskset -pc 1 $BASHPID >/dev/null
	PORT=$(freeport)
	launch --root "$FIX/root" --listen "127.0.0.1:$PORT" --cert "$FIX/ec.pem" \
		--key "$FIX/ec.key" --workers "$workers"
	rc=$?
	taskset -pc "$mask" $BASHPID >/dev/null
	if [ $rc -ne 0 ]; then
		fail "$name: server starts" "$(tail -n 3 "$KTLSD_LOG" | tr '\n' ' ')"
		continue
	fi
	# The line comes once every worker runs (each pins itself first).
	wait_until 10 grep -q ' workers; ' "$KTLSD_LOG"
	expect_eq "$name: starts $want worker(s)" \
		"$(grep -o 'with [0-9]* workers' "$KTLSD_LOG")" "with $want workers"
	cpus=$(thread_cpus "$KTLSD_PID")
	expect_eq "$name: $want worker thread(s) (ktlsd-wN)" "$(grep -c '^ktlsd-w[0-9]*=' <<<"$cpus")" "$want"
	expect_eq "$name: every thread runs on CPU 1 only" \
		"$(grep -v '=1$' <<<"$cpus" | tr '\n' ' ')" ""
	code=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$PORT/a.txt")
	expect_eq "$name: serves" "$code" 200
	stop_ktlsd
done
