#!/usr/bin/python3
"""Latency probe: one small file, again and again, on one keep-alive TLS connection.

Usage: probe.py HOST PORT PATH EXPECTED_FILE READY_FILE [INTERVAL_MS]

Connects once (HTTP/1.1 over TLS; OPENSSL_CONF picks the version and
cipher, as for the other clients), makes a few unrecorded requests, then
creates READY_FILE and sends GET PATH every INTERVAL_MS (default 5) on that
connection. Latency is from the request's send to the last byte of its
answer; a request that takes longer than the interval delays the next one
(the ticks it overran are skipped, not sent in a burst), so a server that
stalls shows as fewer samples and one long one.

Samples are recorded only between SIGUSR1 (the measured window opens) and
SIGTERM (it closes, after the answer in flight); then one line of
KEY=VALUE is printed: n (samples), p50_ms, p99_ms, max_ms (nearest rank),
errors (answers that were not 200 with exactly EXPECTED_FILE's bytes),
cpu_s (this process's own CPU time, to show it did not load the client
core), version and cipher. A connection that breaks ends the probe with
closed=1.
"""
import os
import signal
import socket
import ssl
import sys
import time

host, port, path, expected_file, ready_file = sys.argv[1:6]
interval = (float(sys.argv[6]) if len(sys.argv) > 6 else 5.0) / 1000.0
with open(expected_file, "rb") as f:
    expected = f.read()

recording = False
stopping = False


def on_usr1(_sig, _frame):
    global recording
    recording = True


def on_term(_sig, _frame):
    global stopping
    stopping = True


signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGTERM, on_term)

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["http/1.1"])
raw = socket.create_connection((host, int(port)), timeout=60)
raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
tls = ctx.wrap_socket(raw, server_hostname="localhost")
request = ("GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ktlsd-bench-probe\r\n\r\n"
           % path).encode()
buf = bytearray()


def fetch():
    """One request and its whole answer; True when it is 200 with the expected body."""
    tls.sendall(request)
    while b"\r\n\r\n" not in buf:
        data = tls.recv(65536)
        if not data:
            raise EOFError
        buf.extend(data)
    end = buf.index(b"\r\n\r\n") + 4
    head = bytes(buf[:end]).decode("latin-1").split("\r\n")
    length = None
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("no Content-Length in the answer")
    while len(buf) < end + length:
        data = tls.recv(65536)
        if not data:
            raise EOFError
        buf.extend(data)
    body = bytes(buf[end:end + length])
    del buf[:end + length]
    return head[0].split(" ")[1] == "200" and body == expected


samples = []
errors = 0
closed = 0
try:
    for _ in range(3):
        if not fetch():
            errors += 1
    open(ready_file, "w").close()
    next_at = time.monotonic()
    while not stopping:
        now = time.monotonic()
        if next_at > now:
            time.sleep(next_at - now)
            if stopping:
                break
        t0 = time.monotonic()
        ok = fetch()
        t1 = time.monotonic()
        if recording:
            samples.append(t1 - t0)
            if not ok:
                errors += 1
        next_at += interval
        if next_at < t1:
            next_at = t1 + interval - (t1 - next_at) % interval
except (OSError, EOFError, ValueError):
    closed = 1


def rank(sorted_values, q):
    if not sorted_values:
        return float("nan")
    i = max(0, min(len(sorted_values) - 1, int(q * len(sorted_values) + 0.999999) - 1))
    return sorted_values[i]


samples.sort()
usage = os.times()
print("n=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f errors=%d closed=%d cpu_s=%.3f version=%s cipher=%s"
      % (len(samples), 1000 * rank(samples, 0.50), 1000 * rank(samples, 0.99),
         1000 * (samples[-1] if samples else float("nan")), errors, closed,
         usage.user + usage.system, tls.version() if not closed else "-",
         tls.cipher()[0] if not closed else "-"))
