#!/usr/bin/python3
"""Clients for t_metrics.sh: scrape --status-listen and check what it says.

Run with /usr/bin/python3 (Debian's, which has python3-prometheus-client).

  metrics_check.py expect SPORT EXPR...
      Scrape http://127.0.0.1:SPORT/metrics, parse it with prometheus_client's
      parser and check each EXPR, 'NAME{LABEL=VALUE,...}OP N' with OP one of
      == >= <=: the sum of NAME's samples whose labels include the given ones
      (all workers) compared with N. Scrapes again every 0.2 s for up to 20 s
      until every EXPR holds (the workers publish each 250 ms tick). Prints
      "OK", or one "FAIL EXPR: got V" line per EXPR that never held. Also
      fails on a sample outside any typed family, a per-worker family whose
      sample lacks the worker label, a per-site one (ktlsd_site_*) whose
      sample lacks its site or has a worker, a process-wide one
      (ktlsd_certificate_*, ktlsd_acme_*) with a worker label, or a missing
      ktlsd_build_info.

  metrics_check.py json SPORT
      GET /status: valid JSON; "total" is the sum of the "workers" at every
      number; its totals agree with /metrics. Prints "OK" or the problems, and
      then "requests=N full=N resumed=N failed=N accepted=N".

  metrics_check.py resume PORT PATH
      Two TLS connections (HTTP/1.1, GET PATH), the second resuming the first's
      session. Prints "first=full second=resumed" when that is what happened.

  metrics_check.py gauges PORT PPORT SPORT
      Holds a TLS and a plain keep-alive connection after a GET /a.txt each
      and waits until /metrics shows them idle; then sends half a request head
      on the TLS one and waits until it shows as reading, and for the server
      to drop it (--header-timeout). Prints one line per step.

  metrics_check.py silent SPORT
      Connects to SPORT and sends nothing; while it is connected, a scrape
      of /metrics must be answered. Then waits up to 30 s for the server to
      close the silent connection. Prints "scrape 200 while silent" and
      "silent closed".

  metrics_check.py overlong SPORT
      Sends a request head longer than the status listener takes: prints the
      status line and whether the server closed.
"""

import json
import re
import socket
import ssl
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

EXPR = re.compile(r'^([a-z_]+)(?:\{([^}]*)\})?(==|>=|<=)(\d+)$')


def http_get(port, path, method="GET", timeout=20):
    """(status, headers dict, body bytes) of one plain HTTP/1.1 request."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % (method, path)).encode())
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def scrape(sport):
    """The families of /metrics, and a list of problems with their shape."""
    status, headers, body = http_get(sport, "/metrics")
    problems = []
    if status != 200:
        problems.append("/metrics: status %d" % status)
    if not headers.get("content-type", "").startswith("text/plain; version=0.0.4"):
        problems.append("/metrics: Content-Type %r" % headers.get("content-type"))
    if int(headers.get("content-length", -1)) != len(body):
        problems.append("/metrics: Content-Length %s for %d bytes"
                        % (headers.get("content-length"), len(body)))
    families = list(text_string_to_metric_families(body.decode("utf-8")))
    names = set()
    for f in families:
        names.add(f.name)
        if f.type not in ("counter", "gauge") and not (
                f.type == "histogram" and f.name.startswith("ktlsd_site_")):
            problems.append("%s: type %s (a sample outside its family?)" % (f.name, f.type))
        # Per site: summed over the workers, a series per site.
        if f.name.startswith("ktlsd_site_"):
            for s in f.samples:
                if "site" not in s.labels or "worker" in s.labels:
                    problems.append("%s: a sample without its site, or with a worker" % s.name)
                    break
        elif f.name.startswith(("ktlsd_certificate_", "ktlsd_acme_")):
            # Process-wide: one certificate per site, one ACME thread.
            for s in f.samples:
                if "worker" in s.labels:
                    problems.append("%s: a process-wide sample with a worker" % s.name)
                    break
        elif f.name.startswith("ktlsd_") and f.name not in (
                "ktlsd_build_info", "ktlsd_start_time_seconds", "ktlsd_uptime_seconds",
                "ktlsd_workers"):
            for s in f.samples:
                if "worker" not in s.labels:
                    problems.append("%s: a sample without a worker label" % s.name)
                    break
    if "ktlsd_build_info" not in names:
        problems.append("no ktlsd_build_info")
    return families, problems


def total(families, name, want):
    v = 0
    for f in families:
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == x for k, x in want.items()):
                v += s.value
    return v


def parse_expr(e):
    m = EXPR.match(e)
    if not m:
        raise SystemExit("bad EXPR %r" % e)
    labels = {}
    if m.group(2):
        for kv in m.group(2).split(","):
            k, _, x = kv.partition("=")
            labels[k] = x.strip('"')
    return m.group(1), labels, m.group(3), int(m.group(4))


def holds(got, op, n):
    return got == n if op == "==" else got >= n if op == ">=" else got <= n


def expect(argv):
    sport, exprs = int(argv[0]), [parse_expr(e) for e in argv[1:]]
    deadline = time.monotonic() + 20
    while True:
        families, problems = scrape(sport)
        failed = [(e, total(families, e[0], e[1])) for e in exprs
                  if not holds(total(families, e[0], e[1]), e[2], e[3])]
        if (not failed and not problems) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for p in problems:
        print("FAIL %s" % p)
    for (name, labels, op, n), got in failed:
        print("FAIL %s%s%s%d: got %g" % (name, labels or "", op, n, got))
    if not failed and not problems:
        print("OK")


def leaves(obj, path=""):
    """Every number in obj as {path: value}."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(leaves(v, path + "." + k if path else k))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out[path] = obj
    return out


def check_json(argv):
    sport = int(argv[0])
    status, headers, body = http_get(sport, "/status")
    problems = []
    if status != 200 or headers.get("content-type") != "application/json":
        problems.append("/status: %d %s" % (status, headers.get("content-type")))
    doc = json.loads(body)
    workers = doc["workers"]
    if len(workers) != doc["ktlsd"]["workers"]:
        problems.append("%d workers listed, ktlsd.workers %d"
                        % (len(workers), doc["ktlsd"]["workers"]))
    if [w["id"] for w in workers] != list(range(len(workers))):
        problems.append("worker ids %s" % [w["id"] for w in workers])
    tot = leaves(doc["total"])
    sums = {}
    for w in workers:
        for k, v in leaves({x: y for x, y in w.items() if x != "id"}).items():
            sums[k] = sums.get(k, 0) + v
    if tot != sums:
        problems.append("total is not the sum of the workers: %s"
                        % sorted(k for k in set(tot) | set(sums) if tot.get(k) != sums.get(k)))
    # The same numbers as /metrics (the counts are settled by now).
    families, _ = scrape(sport)
    t = doc["total"]
    pairs = [
        (t["requests"]["total"], total(families, "ktlsd_requests_total", {})),
        (t["connections"]["accepted"], total(families, "ktlsd_connections_accepted_total", {})),
        (t["sent_bytes"]["total"], total(families, "ktlsd_sent_bytes_total", {})),
    ]
    for r in ("full", "resumed", "failed"):
        pairs.append((t["tls"]["handshakes"][r],
                      total(families, "ktlsd_tls_handshakes_total", {"result": r})))
    for j, p in pairs:
        if j != p:
            problems.append("/status says %s, /metrics %s" % (j, p))
    for p in problems:
        print("FAIL %s" % p)
    if not problems:
        print("OK")
    hs = t["tls"]["handshakes"]
    print("requests=%d full=%d resumed=%d failed=%d accepted=%d"
          % (t["requests"]["total"], hs["full"], hs["resumed"], hs["failed"],
             t["connections"]["accepted"]))


def tls_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def read_response(s):
    """Reads one response with a Content-Length body; returns the status."""
    data = b""
    while b"\r\n\r\n" not in data:
        d = s.recv(65536)
        if not d:
            raise EOFError("closed before a response")
        data += d
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
    n = int(m.group(1)) if m else 0
    while len(body) < n:
        d = s.recv(65536)
        if not d:
            raise EOFError("closed in the body")
        body += d
    return int(head.split()[1])


def resume(argv):
    port, path = int(argv[0]), argv[1]
    ctx = tls_context()
    req = ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode()
    names = []
    session = None
    for _ in range(2):
        raw = socket.create_connection(("127.0.0.1", port), timeout=20)
        s = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
        s.sendall(req)
        read_response(s)  # TLS 1.3 tickets arrive after the handshake: read first
        names.append("resumed" if s.session_reused else "full")
        session = s.session
        s.close()
    print("first=%s second=%s" % tuple(names))


def wait_metrics(sport, name, labels, least, secs=20):
    deadline = time.monotonic() + secs
    while True:
        families, _ = scrape(sport)
        got = total(families, name, labels)
        if got >= least or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def gauges(argv):
    port, pport, sport = int(argv[0]), int(argv[1]), int(argv[2])
    req = b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n"
    tls = tls_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30),
                                    server_hostname="localhost")
    tls.sendall(req)
    plain = socket.create_connection(("127.0.0.1", pport), timeout=30)
    plain.sendall(req)
    print("responses %d %d" % (read_response(tls), read_response(plain)))
    idle = wait_metrics(sport, "ktlsd_connections", {"state": "idle"}, 2)
    none = wait_metrics(sport, "ktlsd_connections_tls", {"tls": "none"}, 1)
    fams, _ = scrape(sport)
    enc = (total(fams, "ktlsd_connections_tls", {"tls": "user"}) +
           total(fams, "ktlsd_connections_tls", {"tls": "kernel"}))
    print("idle %d plain %d encrypted %d" % (idle, none, enc))
    tls.sendall(b"GET /a.txt HTTP/1.1\r\nHost: loc")
    reading = wait_metrics(sport, "ktlsd_connections", {"state": "reading"}, 1)
    print("reading %d" % reading)
    tls.settimeout(60)
    try:
        closed = tls.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError):
        closed = True
    print("dropped after the header timeout" if closed else "not dropped")
    plain.close()
    tls.close()


def writing(argv):
    """A response the client does not read counts as writing, until it goes."""
    pport, sport = int(argv[0]), int(argv[1])
    plain = socket.create_connection(("127.0.0.1", pport), timeout=30)
    plain.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    plain.sendall(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
    print("writing %d" % wait_metrics(sport, "ktlsd_connections", {"state": "writing"}, 1))
    plain.close()


def silent(argv):
    sport = int(argv[0])
    quiet = socket.create_connection(("127.0.0.1", sport), timeout=30)
    status, _, body = http_get(sport, "/metrics")
    quiet.setblocking(False)
    try:
        early = quiet.recv(1)
        still = early != b""  # b"": already closed, which is not what we test
    except BlockingIOError:
        still = True
    if status == 200 and body and still:
        print("scrape 200 while silent")
    else:
        print("scrape %d while silent (silent still connected: %s)" % (status, still))
    quiet.settimeout(30)
    try:
        closed = quiet.recv(1) == b""
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    print("silent closed" if closed else "silent still open after 30 s")


def overlong(argv):
    sport = int(argv[0])
    s = socket.create_connection(("127.0.0.1", sport), timeout=30)
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 20000 +
                  b"\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        end = "closed"
    except ConnectionResetError:
        end = "reset"
    except socket.timeout:
        end = "open"
    print("%s %s" % (data.split(b"\r\n", 1)[0].decode("latin-1"), end))


def main():
    cmds = {"expect": expect, "json": check_json, "resume": resume, "gauges": gauges,
            "writing": writing, "silent": silent, "overlong": overlong}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
