#!/usr/bin/python3
"""Summarise one download's strace of a server (bench/lib/cells.sh
cell_cost): syscalls per MiB, send-type calls per MiB, median bytes per send,
bytes moved through user space per MiB (read/pread/recv into the process,
write/send out of it -- what sendfile and splice avoid).

For ktlsd, whose file and socket I/O goes through io_uring and so is
invisible to strace, it also reads the worker's own counters (the "worker 0
stats:" line printed on exit): ring operations per MiB and mean bytes per
ring send.

Usage: strace_cost.py TRACE MIB KIND [KTLSD_STATS_LINE]
       strace_cost.py TRACE req:N KIND   (N small requests: calls per request)
KIND is the server kind (ktlsd, nginx, h2o, ...).
Prints lines "metric|unit|value|note"."""
import re
import statistics
import sys

trace, kind = sys.argv[1], sys.argv[3]
requests = int(sys.argv[2][4:]) if sys.argv[2].startswith("req:") else 0
mib = 0.0 if requests else float(sys.argv[2])
stats = sys.argv[4] if len(sys.argv) > 4 else ""
SENDS = {"write", "writev", "send", "sendto", "sendmsg", "sendfile", "sendfile64", "splice",
         "pwritev", "pwrite64"}
COPY_IN = {"read", "pread64", "readv", "preadv", "recvfrom", "recv", "recvmsg"}
COPY_OUT = {"write", "writev", "send", "sendto", "sendmsg", "pwrite64", "pwritev"}
IGNORE = {"epoll_wait", "epoll_pwait", "io_uring_enter"}  # counted apart below
# "PID name(args) = RET [ERRNO (text)]" or "PID <... name resumed>...) = RET":
# the name at the start, the return value after the last ") = " (arguments
# such as writev's iov_len=N hold "=" too).
name_re = re.compile(r"^(?:\d+\s+)?(?:<\.\.\. )?(\w+)(?:\(| resumed>)")
ret_re = re.compile(r"\)\s+=\s+(-?\d+)(?:\s|$)")
total = 0
waits = 0
uring = 0
send_sizes = []
copied = 0
by_name = {}
with open(trace, errors="replace") as f:
    for line in f:
        if "unfinished ...>" in line or line.startswith("+++") or line.startswith("---"):
            continue
        m = name_re.match(line)
        rets = ret_re.findall(line)
        if not m or not rets:
            continue
        name, ret = m.group(1), int(rets[-1])
        total += 1
        by_name[name] = by_name.get(name, 0) + 1
        if name in ("epoll_wait", "epoll_pwait"):
            waits += 1
        if name == "io_uring_enter":
            uring += 1
        if ret <= 0:
            continue
        if name in SENDS:
            send_sizes.append(ret)
        if name in COPY_IN or name in COPY_OUT:
            copied += ret
top = ", ".join("%s %d" % kv for kv in sorted(by_name.items(), key=lambda kv: -kv[1])[:6])
if requests:
    # The steady state of small keep-alive requests: io_uring_enter (or
    # epoll_wait) is the event loop; every other call is per-request work.
    print("syscalls_per_request|calls/request|%.3f|%d calls for %d requests: %s"
          % (total / requests, total, requests, top))
    print("other_than_event_loop_per_request|calls/request|%.3f|all but io_uring_enter and "
          "epoll_wait/epoll_pwait" % ((total - uring - waits) / requests))
    if kind == "ktlsd":
        print("io_uring_enter_per_request|calls/request|%.3f|one submit per loop turn for all "
              "connections" % (uring / requests))
    sys.exit(0)
print("syscalls_per_mib|calls/MiB|%.1f|%d calls in all: %s" % (total / mib, total, top))
if kind != "ktlsd":
    print("sends_per_mib|calls/MiB|%.1f|write/writev/send*/sendfile/splice" % (len(send_sizes) / mib))
    if send_sizes:
        print("median_send_bytes|bytes|%d|strace; all send-type calls" % statistics.median(send_sizes))
m = re.search(r"bytes_out=(\d+).*body_copy=(\d+) body_splice=(\d+) send_ops=(\d+) "
              r"splice_ops=(\d+) read_ops=(\d+) recv_ops=(\d+)", stats)
if kind == "ktlsd" and not m:
    print("ring_ops_per_mib|ops/MiB|n/a|ktlsd printed no counters on exit")
elif not m:
    print("user_copy_bytes_per_mib|bytes/MiB|%.0f|bytes read into or written out of user space"
          % (copied / mib))
else:
    out, bcopy, bsplice, send, splice, read, recv = (int(x) for x in m.groups())
    # io_uring reads and sends are invisible to strace: derive it from the
    # body path ktlsd's counters say it took (copy: file read into a buffer
    # and sent from it; splice: file to pipe to socket inside the kernel).
    # HTTP/2 payloads sent from mapped file pages (h2_mapped_bytes) are
    # neither read nor written by user space: the kernel copies them once.
    # HTTP/1.1 bodies ktlsd's sealer read from mapped pages (h1_mapped_bytes)
    # were not read into a buffer: only their records are sent from one.
    mm = re.search(r"h2_mapped_bytes=(\d+)", stats)
    mapped = int(mm.group(1)) if mm else 0
    m1 = re.search(r"h1_mapped_bytes=(\d+)", stats)
    sealed = int(m1.group(1)) if m1 else 0
    per = max(0, 2 * (1048576 - mapped / mib) - sealed / mib) if bcopy else 0
    print("user_copy_bytes_per_mib|bytes/MiB|%d|derived from ktlsd counters: body_copy %d "
          "body_splice %d h2_mapped_bytes %d h1_mapped_bytes %d (io_uring I/O is not visible "
          "to strace)" % (per, bcopy, bsplice, mapped, sealed))
    ops = send + splice + read + recv
    print("ring_ops_per_mib|ops/MiB|%.1f|ktlsd counters: send %d splice %d read %d recv %d; "
          "io_uring_enter calls %d" % (ops / mib, send, splice, read, recv, uring))
    if send + splice:
        print("mean_ring_send_bytes|bytes|%d|ktlsd counters: bytes_out / (send_ops + splice_ops), "
              "a mean, not a median" % (out / (send + splice)))
