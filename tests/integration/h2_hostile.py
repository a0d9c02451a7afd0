#!/usr/bin/python3
"""HTTP/2 clients that obey the protocol but not the server's limits, for
t_h2_limits.sh. Frames come from h2_client.py. Each subcommand prints one
result per line; every wait is bounded.

  stall PORT SERVER_PID PATH MODE INPUT SECS
      Requests PATH and stops reading: MODE "full" keeps the windows open
      (the socket fills), "zero" offers a zero window. Then keeps sending
      input that says nothing of its reading, every half second: a PING
      (INPUT "ping") or one byte of a stream of PING frames ("bytes"),
      while watching SERVER_PID's open files. Prints "CLOSED secs" once the server has let go of the
      connection (its fd count is back where it was before we connected),
      or "OPEN" after SECS; then drains what the socket holds: "GOT n of m"
      (body bytes of Content-Length).

  dribble PORT SECS
      Preface and SETTINGS, then a HEADERS frame one byte a second.
      "CLOSED secs" (from the first byte of the HEADERS frame) or "OPEN".

  chatter PORT SECS MODE
      Preface and SETTINGS, then every half second a PING (MODE "ping") or
      one byte of a PING frame (MODE "partial": the frame stays unfinished
      for 8 s): "GOAWAY code last" if one came, "CLOSED secs" or "OPEN".

  burst PORT N PATH
      N requests at once: "ANSWERED a", "REFUSED r", "UNANSWERED u",
      "GOAWAY code last", then "CLOSED secs" or "OPEN" (within 10 s of the
      last answer).

  made-reset PORT N PATH
      N streams, each followed by a WINDOW_UPDATE that overflows its window
      (the server must reset it: FLOW_CONTROL_ERROR): "RESETS n",
      "GOAWAY code last" if one came, "CLOSED secs" or "OPEN".

  hold PORT CONNS STREAMS PATH FLAG SECS
      CONNS connections, each with STREAMS requests at a zero window. Prints
      "HELD n" (responses started), then keeps them until FLAG exists (or
      SECS pass), then closes them.

  idle-after PORT CONNS PATH FLAG SECS [REQUESTS]
      CONNS connections, each downloads PATH to the end (REQUESTS times,
      default 1, at most 64 streams at once) and stays open: "READY n"
      (connections whose downloads all completed); keeps them until FLAG
      exists or SECS.

  replaced PORT PATH FLAG
      Requests PATH at a zero window, prints "HEADERS status", waits for
      FLAG (the test replaces the file meanwhile), opens the windows and
      reads: "RESET 1 code", or "COMPLETE bytes sha256".
"""

import hashlib
import os
import socket
import struct
import sys
import time

from h2_client import (DATA, END_HEADERS, END_STREAM, HEADERS, PING, PREFACE, RST_STREAM,
                       S_ENABLE_PUSH, S_INITIAL_WINDOW_SIZE, Conn, data_payload, frame,
                       header_block, print_end, request_headers, settings, window_update)
from lib import Closed


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def request(conn, sid, path):
    return frame(HEADERS, END_HEADERS | END_STREAM, sid, request_headers(conn.enc, path))


def drain_body(conn, secs):
    """Body bytes of stream 1 until the connection ends or secs pass, and
    the Content-Length if its HEADERS came."""
    got, length = 0, None
    deadline = time.monotonic() + secs
    try:
        while True:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if sid == 1 and ftype == HEADERS:
                length = int(header_block(conn, flags, payload, deadline).get("content-length", 0))
            elif sid == 1 and ftype == DATA:
                got += len(data_payload(flags, payload))
    except (Closed, socket.timeout, OSError, ValueError):
        pass
    return got, length


def stall(argv):
    port, pid, path, mode, kind = int(argv[0]), int(argv[1]), argv[2], argv[3], argv[4]
    secs = float(argv[5])
    before = open_fds(pid)
    conn = Conn(port)
    window = 0 if mode == "zero" else 2**31 - 1
    out = settings([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, window)])
    if window:
        out += window_update(0, window - 65535)
    conn.send(PREFACE + out + request(conn, 1, path))
    # Settle the SETTINGS exchange (our ACK must not split a PING we send a
    # byte at a time), without reading the body: a zero window sends none,
    # and a full socket stays full.
    length = None
    if mode == "zero":
        deadline = time.monotonic() + 0.5
        try:
            while True:
                ftype, flags, sid, payload = conn.next_frame(deadline)
                if sid == 1 and ftype == HEADERS:
                    length = header_block(conn, flags, payload, deadline).get("content-length")
        except (socket.timeout, Closed, OSError):
            pass
    else:
        time.sleep(0.5)
        conn.send(settings(ack=True))
    start = time.monotonic()
    closed = None
    n = 0
    while time.monotonic() - start < secs:
        time.sleep(0.5)
        if open_fds(pid) <= before:
            closed = time.monotonic() - start
            break
        n += 1
        ping = frame(PING, 0, 0, struct.pack(">Q", n // 17))
        try:
            conn.send(ping if kind == "ping" else ping[(n - 1) % 17:(n - 1) % 17 + 1])
        except OSError:
            pass
    print("CLOSED %.2f" % closed if closed is not None else "OPEN")
    conn.sock.settimeout(5)
    got, drained_length = drain_body(conn, 20)
    print("GOT %d of %s" % (got, length or drained_length))
    return 0


def settled(port):
    """A connection past the SETTINGS exchange, so that our ACK cannot land
    inside a frame we send a byte at a time."""
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    conn.wait_close(0.5)
    return conn


def dribble(argv):
    port, secs = int(argv[0]), float(argv[1])
    conn = settled(port)
    data = request(conn, 1, "/a.txt")
    start = time.monotonic()
    closed = None
    i = 0
    while time.monotonic() - start < secs:
        if i < len(data) - 1:
            try:
                conn.send(data[i:i + 1])
            except OSError:
                closed = time.monotonic() - start
                break
            i += 1
        t = conn.wait_close(1.0)
        if t is not None:
            closed = time.monotonic() - start
            break
    print("CLOSED %.2f" % closed if closed is not None else "OPEN")
    return 0


def chatter(argv):
    port, secs, mode = int(argv[0]), float(argv[1]), argv[2]
    conn = settled(port)
    start = time.monotonic()
    closed = None
    n = 0
    while time.monotonic() - start < secs:
        n += 1
        ping = frame(PING, 0, 0, struct.pack(">Q", n // 17))
        try:
            conn.send(ping if mode == "ping" else ping[(n - 1) % 17:(n - 1) % 17 + 1])
        except OSError:
            closed = time.monotonic() - start
            break
        if conn.wait_close(0.5) is not None:
            closed = time.monotonic() - start
            break
    print_end(conn, closed)
    return 0


def burst(argv):
    port, n, path = int(argv[0]), int(argv[1]), argv[2]
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    sids = [1 + 2 * i for i in range(n)]
    conn.send(b"".join(request(conn, sid, path) for sid in sids))
    answered, refused = set(), set()
    deadline = time.monotonic() + 20
    closed = None
    start = time.monotonic()
    try:
        while len(answered) + len(refused) < n:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if ftype == HEADERS and sid in sids:
                if header_block(conn, flags, payload, deadline).get(":status") == "200":
                    answered.add(sid)
            elif ftype == RST_STREAM and sid in sids:
                refused.add(sid)
    except socket.timeout:  # an OSError too: first
        pass
    except (Closed, OSError):
        closed = time.monotonic() - start
    print("ANSWERED %d" % len(answered))
    print("REFUSED %d" % len(refused))
    print("UNANSWERED %d" % (n - len(answered) - len(refused)))
    if closed is None:
        t = conn.wait_close(10)
        closed = None if t is None else time.monotonic() - start
    print_end(conn, closed)
    return 0


def made_reset(argv):
    port, n, path = int(argv[0]), int(argv[1]), argv[2]
    conn = Conn(port)
    conn.start([(S_ENABLE_PUSH, 0)])
    resets = 0
    start = time.monotonic()
    closed = None
    try:
        # In groups, reading between them, as a client that wants its
        # resets answered would.
        for g in range(0, n, 50):
            out = []
            for i in range(g, min(n, g + 50)):
                sid = 1 + 2 * i
                out.append(request(conn, sid, path))
                out.append(window_update(sid, 2**31 - 1))
            conn.send(b"".join(out))
            deadline = time.monotonic() + 0.2
            try:
                while True:
                    ftype, _, _, _ = conn.next_frame(deadline)
                    if ftype == RST_STREAM:
                        resets += 1
            except socket.timeout:
                pass
        deadline = time.monotonic() + 3
        while True:
            ftype, _, _, _ = conn.next_frame(deadline)
            if ftype == RST_STREAM:
                resets += 1
    except socket.timeout:  # an OSError too: first
        pass
    except (Closed, OSError):
        closed = time.monotonic() - start
    print("RESETS %d" % resets)
    print_end(conn, closed)
    return 0


def wait_flag(flag, secs):
    deadline = time.monotonic() + secs
    while not os.path.exists(flag) and time.monotonic() < deadline:
        time.sleep(0.1)


def hold(argv):
    port, conns, streams, path = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    flag, secs = argv[4], float(argv[5])
    held = 0
    open_conns = []
    for _ in range(conns):
        conn = Conn(port)
        conn.send(PREFACE + settings([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, 0)]) +
                  b"".join(request(conn, 1 + 2 * i, path) for i in range(streams)))
        open_conns.append(conn)
    for conn in open_conns:
        deadline = time.monotonic() + 20
        got = 0
        try:
            while got < streams:
                ftype, flags, sid, payload = conn.next_frame(deadline)
                if ftype == HEADERS:
                    header_block(conn, flags, payload, deadline)
                    got += 1
        except (Closed, socket.timeout, OSError, ValueError):
            pass
        held += got
    print("HELD %d" % held, flush=True)
    wait_flag(flag, secs)
    for conn in open_conns:
        conn.sock.close()
    return 0


def download_rounds(conn, path, requests, deadline):
    """requests downloads of path, at most 64 streams at once: True when
    every one ended."""
    sid = 1
    while requests > 0:
        sids = set(range(sid, sid + 2 * min(requests, 64), 2))
        conn.send(b"".join(request(conn, s, path) for s in sorted(sids)))
        requests -= len(sids)
        sid += 2 * len(sids)
        while sids:
            ftype, flags, s, payload = conn.next_frame(deadline)
            if ftype == HEADERS and s in sids:
                header_block(conn, flags, payload, deadline)
            if s in sids and flags & END_STREAM and ftype in (DATA, HEADERS):
                sids.discard(s)
            elif s in sids and ftype == RST_STREAM:
                return False
    return True


def idle_after(argv):
    port, conns, path, flag, secs = int(argv[0]), int(argv[1]), argv[2], argv[3], float(argv[4])
    requests = int(argv[5]) if len(argv) > 5 else 1
    ready = 0
    keep = []
    for _ in range(conns):
        conn = Conn(port)
        conn.send(PREFACE + settings([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, 2**31 - 1)]) +
                  window_update(0, 2**31 - 1 - 65535))
        try:
            if download_rounds(conn, path, requests, time.monotonic() + 30):
                ready += 1
        except (Closed, socket.timeout, OSError, ValueError):
            pass
        keep.append(conn)
    print("READY %d" % ready, flush=True)
    wait_flag(flag, secs)
    return 0


def replaced(argv):
    port, path, flag = int(argv[0]), argv[1], argv[2]
    conn = Conn(port)
    conn.send(PREFACE + settings([(S_ENABLE_PUSH, 0), (S_INITIAL_WINDOW_SIZE, 0)]) +
              request(conn, 1, path))
    deadline = time.monotonic() + 10
    while True:
        ftype, flags, sid, payload = conn.next_frame(deadline)
        if ftype == HEADERS and sid == 1:
            print("HEADERS %s" % header_block(conn, flags, payload, deadline)[":status"], flush=True)
            break
    wait_flag(flag, 20)
    conn.send(window_update(0, 2**30) + window_update(1, 2**30))
    sha = hashlib.sha256()
    got = 0
    deadline = time.monotonic() + 20
    try:
        while True:
            ftype, flags, sid, payload = conn.next_frame(deadline)
            if sid == 1 and ftype == RST_STREAM:
                print("RESET 1 %d" % struct.unpack(">I", payload[:4])[0])
                return 0
            if sid == 1 and ftype == DATA:
                body = data_payload(flags, payload)
                sha.update(body)
                got += len(body)
                if flags & END_STREAM:
                    break
    except (Closed, socket.timeout, OSError) as e:
        print("INCOMPLETE %s" % type(e).__name__)
        return 1
    print("COMPLETE %d %s" % (got, sha.hexdigest()))
    return 0


def main():
    cmds = {"stall": stall, "dribble": dribble, "chatter": chatter, "burst": burst,
            "made-reset": made_reset, "hold": hold, "idle-after": idle_after, "replaced": replaced}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
