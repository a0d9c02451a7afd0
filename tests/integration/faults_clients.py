#!/usr/bin/python3
"""Misbehaving clients for t_faults.sh: many at once, in one process.

Run with /usr/bin/python3 (Debian's: python3-h2 for the HTTP/2 clients).
Every subcommand talks to 127.0.0.1:PORT, prints its findings as
"KEY key=value ..." lines and exits 0 unless it could not run at all.

  faults_clients.py hold PORT IDLE SLOW WATCH
      Opens IDLE TLS connections that go silent after the handshake and SLOW
      slowloris ones that send one byte of a never-ending request head every
      0.5 s. Prints "READY ..." once all are open (or failed), then watches
      up to WATCH seconds for the server to close them (EOF, reset or TLS
      error on recv; a send that fails counts too) and prints
        IDLE open=N closed=K max=SECS
        SLOW open=N closed=K max=SECS
      SECS: the longest time from a connection's handshake to its close,
      among the closed ones.

  faults_clients.py abort PORT N PATH
      N clients (16 at a time) that each request PATH and vanish partway:
      a third over HTTP/2; some close right after the request, some after a
      few KiB, some after up to 2 MiB; half with a reset (SO_LINGER 0), half
      with a plain close. Prints "ABORT done=N errors=K".

  faults_clients.py junk PORT KIND WATCH
      One TCP connection that sends KIND: "random" (1 KiB of random bytes),
      "plain" (an HTTP/1.1 request in clear text) or "hello" (the first 20
      bytes of a real ClientHello, then silence). Prints "CLOSED secs" when
      the server closes it (counted from the send), "OPEN" after WATCH s.

  faults_clients.py tcp PORT N SECS
      Opens N plain TCP connections (no TLS), prints "OPEN n" (how many
      connected), holds them SECS seconds, closes them all, prints "DONE".

  faults_clients.py stall PORT PATH WATCH
      A client with a 4 KiB SO_RCVBUF that requests PATH and never reads.
      Watches the server's end of the connection with ss(8): prints
      "STALLED port=LOCALPORT" once the request is out, then "SERVER_CLOSED
      secs" when the server's socket leaves ESTABLISHED (it has given up on
      the client), or "OPEN" after WATCH s; then reads what was buffered
      until EOF and prints "READ bytes=N".
"""

import os
import queue
import resource
import selectors
import socket
import ssl
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# A request head that never ends: a slowloris sends it one byte at a time.
DRIP = b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100000


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def client_ctx(alpn=("http/1.1",)):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.options |= getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)
    ctx.set_alpn_protocols(list(alpn))
    return ctx


def out(line):
    print(line, flush=True)


# ---- hold: idle and slowloris connections ----------------------------------

class Held:
    def __init__(self, kind, sock, ready):
        self.kind = kind
        self.sock = sock
        self.ready = ready     # handshake done (monotonic)
        self.sent = 0          # slowloris bytes sent
        self.closed_at = None


def hold(port, nidle, nslow, watch):
    raise_nofile()
    ctx = client_ctx()
    ready_q = queue.Queue()
    fails = []

    def open_one(kind):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            ts = ctx.wrap_socket(s, server_hostname="localhost")
            ts.setblocking(False)
            ready_q.put(Held(kind, ts, time.monotonic()))
        except (OSError, ssl.SSLError) as e:
            fails.append("%s: %s" % (kind, e))

    # Interleaved, so both kinds are open early.
    order = []
    i = j = 0
    while i < nidle or j < nslow:
        if j < nslow and (i >= nidle or j * nidle <= i * nslow):
            order.append("slow")
            j += 1
        else:
            order.append("idle")
            i += 1

    sel = selectors.DefaultSelector()
    held = []
    pool = ThreadPoolExecutor(16)
    futures = [pool.submit(open_one, k) for k in order]
    announced = False
    start = time.monotonic()
    next_drip = start
    while True:
        now = time.monotonic()
        while True:
            try:
                h = ready_q.get_nowait()
            except queue.Empty:
                break
            held.append(h)
            sel.register(h.sock, selectors.EVENT_READ, h)
        if not announced and all(f.done() for f in futures):
            announced = True
            out("READY open=%d failed=%d%s" % (len(held), len(fails),
                                                (" first_error=" + fails[0].replace(" ", "_")) if fails else ""))
            watch_end = time.monotonic() + watch
        if announced and (time.monotonic() > watch_end or all(h.closed_at for h in held)):
            break
        if now >= next_drip:
            next_drip = now + 0.5
            for h in held:
                if h.kind != "slow" or h.closed_at:
                    continue
                try:
                    h.sock.send(DRIP[h.sent:h.sent + 1])
                    h.sent += 1
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    pass
                except (OSError, ssl.SSLError):
                    close_held(sel, h)
        for key, _ in sel.select(timeout=0.05):
            h = key.data
            try:
                while True:
                    data = h.sock.recv(65536)
                    if not data:
                        close_held(sel, h)
                        break
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                pass
            except (OSError, ssl.SSLError):
                close_held(sel, h)
    pool.shutdown(wait=True)
    for kind in ("idle", "slow"):
        mine = [h for h in held if h.kind == kind]
        done = [h.closed_at - h.ready for h in mine if h.closed_at]
        out("%s open=%d closed=%d max=%.2f" % (kind.upper(), len(mine), len(done), max(done) if done else -1))
    for h in held:
        h.sock.close()
    return 0


def close_held(sel, h):
    if h.closed_at is None:
        h.closed_at = time.monotonic()
        sel.unregister(h.sock)


# ---- abort: clients that vanish mid-download ---------------------------------

def linger0(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def abort_h1(port, path, want, reset):
    # wrap_socket takes the plain socket over: from then on only ts is used.
    ts = client_ctx().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                  server_hostname="localhost")
    try:
        ts.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode())
        got = 0
        while got < want:
            data = ts.recv(65536)
            if not data:
                break
            got += len(data)
        if reset:
            linger0(ts)
    finally:
        ts.close()


def abort_h2(port, path, want, reset):
    import h2.config
    import h2.connection

    ts = client_ctx(("h2",)).wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                         server_hostname="localhost")
    try:
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        c.initiate_connection()
        c.increment_flow_control_window(1 << 24)
        for sid in (1, 3, 5):
            c.send_headers(sid, [(":method", "GET"), (":path", path), (":scheme", "https"),
                                 (":authority", "localhost")], end_stream=True)
        ts.sendall(c.data_to_send())
        got = 0
        while got < want:
            data = ts.recv(65536)
            if not data:
                break
            got += len(data)
            for ev in c.receive_data(data):
                if hasattr(ev, "flow_controlled_length") and ev.flow_controlled_length:
                    c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            pending = c.data_to_send()
            if pending:
                ts.sendall(pending)
        if reset:
            linger0(ts)
    finally:
        ts.close()


def abort(port, n, path):
    raise_nofile()
    wants = [0, 1, 4096, 65536, 1 << 20, 2 << 20]
    errors = []

    def one(i):
        try:
            fn = abort_h2 if i % 3 == 2 else abort_h1
            fn(port, path, wants[i % len(wants)], (i // 3) % 2 == 0)
        except Exception as e:  # a refused or reset client is what we test
            errors.append("%s: %s" % (type(e).__name__, e))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(n)))
    out("ABORT done=%d errors=%d%s" % (n, len(errors), (" first_error=" + errors[0].replace(" ", "_")) if errors else ""))
    return 0


# ---- junk: not TLS, or not enough of it ---------------------------------------

def client_hello_prefix(n):
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = client_ctx().wrap_bio(inc, outg, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outg.read()[:n]


def junk(port, kind, watch):
    if kind == "random":
        payload = os.urandom(1024)
    elif kind == "plain":
        payload = b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n"
    elif kind == "hello":
        payload = client_hello_prefix(20)
    else:
        print("unknown kind %s" % kind, file=sys.stderr)
        return 2
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(payload)
    start = time.monotonic()
    end = start + watch
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                out("OPEN")
                return 0
            s.settimeout(left)
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                out("CLOSED %.2f" % (time.monotonic() - start))
                return 0
    finally:
        s.close()


# ---- tcp: connections that take a file descriptor each ----------------------------

def tcp(port, n, secs):
    raise_nofile()
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            pass
    out("OPEN %d" % len(socks))
    time.sleep(secs)
    for s in socks:
        s.close()
    out("DONE")
    return 0


# ---- stall: a client that stops reading -------------------------------------------

def server_state(port, lport):
    """The state of the server's end of 127.0.0.1:port <-> :lport, or None."""
    r = subprocess.run(["ss", "-tnH", "state", "all",
                        "( sport = :%d and dport = :%d )" % (port, lport)],
                       capture_output=True, text=True, check=False)
    for line in r.stdout.splitlines():
        fields = line.split()
        if fields:
            return fields[0]
    return None


def stall(port, path, watch):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    ts = client_ctx().wrap_socket(s, server_hostname="localhost")
    ts.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode())
    lport = ts.getsockname()[1]
    start = time.monotonic()
    out("STALLED port=%d" % lport)
    while True:
        st = server_state(port, lport)
        if st != "ESTAB":
            out("SERVER_CLOSED %.2f state=%s" % (time.monotonic() - start, st))
            break
        if time.monotonic() - start > watch:
            out("OPEN")
            break
        time.sleep(0.1)
    got = 0
    ts.settimeout(5)
    try:
        while True:
            data = ts.recv(1 << 20)
            if not data:
                break
            got += len(data)
    except (OSError, ssl.SSLError):
        pass
    out("READ bytes=%d" % got)
    ts.close()
    return 0


def main():
    args = sys.argv[1:]
    try:
        if len(args) == 5 and args[0] == "hold":
            return hold(int(args[1]), int(args[2]), int(args[3]), float(args[4]))
        if len(args) == 4 and args[0] == "abort":
            return abort(int(args[1]), int(args[2]), args[3])
        if len(args) == 4 and args[0] == "junk":
            return junk(int(args[1]), args[2], float(args[3]))
        if len(args) == 4 and args[0] == "tcp":
            return tcp(int(args[1]), int(args[2]), float(args[3]))
        if len(args) == 4 and args[0] == "stall":
            return stall(int(args[1]), args[2], float(args[3]))
    except OSError as e:
        out("ERROR %s" % e)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
