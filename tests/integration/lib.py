#!/usr/bin/python3
"""The Python half of lib.sh: what the shell cannot do well on its own.

Run with /usr/bin/python3 (Debian's), not a pyenv one. Subcommands:

  lib.py freeport
      Print a TCP port on 127.0.0.1 that nothing is bound to right now. The
      range 20000-32767 sits below Linux's ephemeral range (32768-60999), so
      our own clients' source ports never take it between the probe and the
      server's bind.

  lib.py raw [--plain] [--sni NAME] [--dir DIR] PORT STEP...
      One connection to 127.0.0.1:PORT (TLS with SNI NAME, "localhost" by
      default, and no certificate check, or plain TCP with --plain), then
      the steps in order:
        send=TEXT       send TEXT; Python escapes (\\r \\n \\x00 \\\\) are decoded
        trickle=TEXT    send TEXT in pieces (7 bytes, 40 bytes, ten single
                        bytes, the rest), each its own write, 50 ms apart
        sendfile=PATH   send the bytes of PATH
        resp            read one response (to a GET), print "RESP status bodylen"
        resp-head       the same for a response to HEAD (no body expected)
        close=SECS      wait up to SECS for the peer to close: print
                        "CLOSED secs" or "OPEN"; bytes that arrive first are
                        counted and printed as "EXTRA n"
        all=SECS        read until the peer closes (or SECS pass), then parse
                        every response in what came: "RESP ..." lines, then
                        "CLOSED secs" or "OPEN"
        drip=TEXT       send TEXT one byte every 0.5 s, watching for the peer
                        to close: "CLOSED secs" as soon as it does (counted
                        from the first byte), "OPEN" if all of TEXT went out
        sleep=SECS      wait
      Response i (from 0) is saved as DIR/i.head and DIR/i.body (chunked
      bodies are decoded). A handshake failure prints "TLSFAIL reason" and
      exits 3; anything that cannot be parsed prints "BADRESP reason" and
      exits 4. Connection resets count as a close.

  lib.py stdout-to pipe|socket FILE CMD ARG...
      Runs CMD (exec: it keeps this process's id) with its stdout the
      writing end of a pipe or of a Unix stream socket pair (what journald
      gives a service), and copies what comes out of the other end to FILE
      from a child process until the last writer is gone.

  lib.py multipart BODY CONTENT_TYPE FILE RANGES
      Check a multipart/byteranges body against FILE: RANGES is the list of
      "first-last" pairs the response must contain, in order. Prints one line
      per problem and exits 1 if there is any.
"""

import codecs
import os
import random
import re
import socket
import ssl
import sys
import time


def freeport():
    # Not seeded from the pid and the time: two calls a moment apart from
    # consecutive pids gave the same seed, hence the same port, to two
    # listeners of one server (t_limits_site, under load).
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randint(20000, 32767)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        print(port)
        return 0
    print("no free port found", file=sys.stderr)
    return 1


def recv_some(conn, deadline, size):
    """Up to size bytes from conn.sock before deadline (socket.timeout after
    it). EOF, a reset or a TLS alert from the server set conn.eof and raise
    Closed. Shared by lib.py's and h2_client.py's connections."""
    if conn.eof:
        raise Closed()
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout()
    conn.sock.settimeout(left)
    try:
        chunk = conn.sock.recv(size)
    except (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError, ssl.SSLZeroReturnError):
        chunk = b""
    except ssl.SSLError as e:
        # An alert from the server (e.g. after a bad record) also ends it.
        if "timed out" in str(e):
            raise socket.timeout()
        chunk = b""
    if not chunk:
        conn.eof = True
        raise Closed()
    return chunk


class Closed(Exception):
    pass


class Conn:
    def __init__(self, port, plain, sni="localhost"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if not plain:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            # A server that closes without close_notify after an error is
            # what we test for; it must read as EOF, not as an exception.
            ctx.options |= getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)
            self.sock = ctx.wrap_socket(self.sock, server_hostname=sni)
        # A bytearray: appending to bytes copies the whole buffer on every
        # recv (quadratic; draining 4 MB in 16 KiB records took 4 s).
        self.buf = bytearray()
        self.eof = False

    def send(self, data):
        self.sock.sendall(data)

    def fill(self, deadline):
        """Read more into buf; raise Closed at EOF or reset, socket.timeout
        when the deadline passes."""
        self.buf += recv_some(self, deadline, 65536)


def parse_head(head):
    lines = head.split(b"\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d{3})(?: .*)?$", lines[0])
    if not m:
        raise ValueError("bad status line %r" % lines[0][:80])
    headers = {}
    for line in lines[1:]:
        if b":" not in line:
            raise ValueError("bad header line %r" % line[:80])
        k, v = line.split(b":", 1)
        headers.setdefault(k.strip().lower().decode("latin-1"), []).append(v.strip().decode("latin-1"))
    return int(m.group(1)), headers


def body_length(status, headers, head_request):
    """None means chunked; -1 means read to close."""
    if head_request or status in (204, 304) or 100 <= status < 200:
        return 0
    te = ",".join(headers.get("transfer-encoding", [])).lower()
    if "chunked" in te:
        return None
    if "content-length" in headers:
        vals = set(headers["content-length"])
        if len(vals) != 1:
            raise ValueError("conflicting Content-Length %r" % headers["content-length"])
        return int(vals.pop())
    return -1


def take_response(conn, head_request, deadline, at_eof_ok=False):
    """Parse one response from conn (reading as needed). Returns (head, body)."""
    while b"\r\n\r\n" not in conn.buf:
        conn.fill(deadline)
    head, rest = conn.buf.split(b"\r\n\r\n", 1)
    status, headers = parse_head(head)
    n = body_length(status, headers, head_request)
    if n is None:
        body = bytearray()
        conn.buf = rest
        while True:
            while b"\r\n" not in conn.buf:
                conn.fill(deadline)
            line, conn.buf = conn.buf.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            while len(conn.buf) < size + 2:
                conn.fill(deadline)
            body += conn.buf[:size]
            del conn.buf[:size + 2]
            if size == 0:
                break
    elif n < 0:
        conn.buf = rest
        try:
            while True:
                conn.fill(deadline)
        except Closed:
            pass
        body, conn.buf = conn.buf, bytearray()
    else:
        conn.buf = rest
        while len(conn.buf) < n:
            conn.fill(deadline)
        body, conn.buf = conn.buf[:n], conn.buf[n:]
    return status, head, body


def raw(argv):
    plain = False
    outdir = None
    sni = "localhost"
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--plain":
            plain = True
        elif opt == "--sni":
            sni = argv.pop(0)
        elif opt == "--dir":
            outdir = argv.pop(0)
        else:
            print("unknown option %s" % opt, file=sys.stderr)
            return 2
    port = int(argv.pop(0))
    if outdir:
        os.makedirs(outdir, exist_ok=True)
    try:
        conn = Conn(port, plain, sni)
    except (ssl.SSLError, OSError) as e:
        print("TLSFAIL %s" % e)
        return 3
    nresp = 0

    def save(status, head, body):
        nonlocal nresp
        if outdir:
            with open(os.path.join(outdir, "%d.head" % nresp), "wb") as f:
                f.write(head)
            with open(os.path.join(outdir, "%d.body" % nresp), "wb") as f:
                f.write(body)
        print("RESP %d %d" % (status, len(body)))
        nresp += 1

    for step in argv:
        name, _, arg = step.partition("=")
        try:
            if name == "send":
                conn.send(codecs.decode(arg, "unicode_escape").encode("latin-1"))
            elif name == "trickle":
                data = codecs.decode(arg, "unicode_escape").encode("latin-1")
                for n in [7, 40] + [1] * 10 + [len(data)]:
                    if not data:
                        break
                    conn.send(data[:n])
                    data = data[n:]
                    time.sleep(0.05)
            elif name == "sendfile":
                with open(arg, "rb") as f:
                    conn.send(f.read())
            elif name in ("resp", "resp-head"):
                save(*take_response(conn, name == "resp-head", time.monotonic() + 15))
            elif name == "drip":
                data = codecs.decode(arg, "unicode_escape").encode("latin-1")
                start = time.monotonic()
                closed = False
                for i in range(len(data)):
                    try:
                        conn.send(data[i:i + 1])
                    except OSError:
                        closed = True
                        break
                    deadline = time.monotonic() + 0.5
                    try:
                        while True:
                            conn.fill(deadline)
                    except Closed:
                        closed = True
                        break
                    except socket.timeout:
                        pass
                if closed:
                    print("CLOSED %.2f" % (time.monotonic() - start))
                else:
                    print("OPEN")
            elif name == "sleep":
                time.sleep(float(arg))
            elif name in ("close", "all"):
                start = time.monotonic()
                deadline = start + float(arg)
                # close only counts what arrives (up to a whole big file):
                # nothing is kept, so draining costs no copies.
                extra = 0
                if name == "close":
                    extra, conn.buf = len(conn.buf), bytearray()
                try:
                    while True:
                        if name == "all":
                            conn.fill(deadline)
                        else:
                            extra += len(recv_some(conn, deadline, 65536))
                except Closed:
                    elapsed = time.monotonic() - start
                    if name == "all":
                        while conn.buf:
                            save(*take_response(conn, False, deadline))
                    elif extra:
                        print("EXTRA %d" % extra)
                    print("CLOSED %.2f" % elapsed)
                except socket.timeout:
                    if name == "all":
                        while b"\r\n\r\n" in conn.buf:
                            save(*take_response(conn, False, deadline))
                        extra = len(conn.buf)
                    if extra:
                        print("EXTRA %d" % extra)
                    print("OPEN")
            else:
                print("unknown step %s" % step, file=sys.stderr)
                return 2
        except Closed:
            print("BADRESP closed before step %s completed" % name)
            return 4
        except socket.timeout:
            print("BADRESP timed out in step %s" % name)
            return 4
        except (BrokenPipeError, ConnectionResetError) as e:
            print("BADRESP send failed in step %s: %s" % (name, e))
            return 4
        except ValueError as e:
            print("BADRESP %s" % e)
            return 4
    return 0


def stdout_to(kind, path, cmd):
    if kind == "pipe":
        rd, wr = os.pipe()
    else:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        rd, wr = a.detach(), b.detach()
    if os.fork() == 0:
        os.close(wr)
        with open(path, "wb") as out:
            while True:
                chunk = os.read(rd, 65536)
                if not chunk:
                    break
                out.write(chunk)
                out.flush()
        os._exit(0)
    os.close(rd)
    os.dup2(wr, 1)
    os.close(wr)
    os.execv(cmd[0], cmd)


def multipart(body_path, content_type, file_path, ranges):
    problems = []
    m = re.match(r"multipart/byteranges;\s*boundary=\"?([^\";]+)\"?", content_type.strip())
    if not m:
        print("Content-Type is not multipart/byteranges with a boundary: %r" % content_type)
        return 1
    boundary = m.group(1).encode()
    with open(body_path, "rb") as f:
        body = f.read()
    size = os.path.getsize(file_path)
    want = [tuple(int(x) for x in r.split("-")) for r in ranges.split(",")]
    delim = b"--" + boundary
    pos = body.find(delim)
    if pos < 0:
        print("boundary not found in body")
        return 1
    parts = []
    while True:
        pos += len(delim)
        if body[pos:pos + 2] == b"--":
            break
        if body[pos:pos + 2] != b"\r\n":
            problems.append("no CRLF after boundary at %d" % pos)
            break
        hend = body.find(b"\r\n\r\n", pos)
        if hend < 0:
            problems.append("part headers not terminated")
            break
        _, hdrs = parse_head(b"HTTP/1.1 200 x" + body[pos:hend])
        nxt = body.find(b"\r\n" + delim, hend + 4)
        if nxt < 0:
            problems.append("part not terminated by a boundary")
            break
        parts.append((hdrs, body[hend + 4:nxt]))
        pos = nxt + 2
    if len(parts) != len(want):
        problems.append("%d parts, want %d" % (len(parts), len(want)))
    with open(file_path, "rb") as f:
        for i, ((first, last), (hdrs, data)) in enumerate(zip(want, parts)):
            cr = hdrs.get("content-range", ["(none)"])[0]
            if cr != "bytes %d-%d/%d" % (first, last, size):
                problems.append("part %d Content-Range %r, want bytes %d-%d/%d" % (i, cr, first, last, size))
            f.seek(first)
            if data != f.read(last - first + 1):
                problems.append("part %d bytes differ from the file (got %d bytes)" % (i, len(data)))
            if "content-type" not in hdrs:
                problems.append("part %d has no Content-Type" % i)
    for p in problems:
        print(p)
    return 1 if problems else 0


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "freeport":
        return freeport()
    if cmd == "raw":
        return raw(args)
    if cmd == "stdout-to" and len(args) >= 3 and args[0] in ("pipe", "socket"):
        return stdout_to(args[0], args[1], args[2:])
    if cmd == "multipart" and len(args) == 4:
        return multipart(*args)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
