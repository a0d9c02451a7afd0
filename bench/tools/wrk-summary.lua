-- Prints wrk's exact totals on one line for bench/lib/cells.sh (wrk's own
-- summary rounds bytes to the nearest 0.01 MB).
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("SUMMARY requests=%d bytes=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\n",
		summary.requests, summary.bytes,
		e.connect + e.read + e.write + e.status + e.timeout,
		summary.duration, latency:percentile(50), latency:percentile(99)))
end
