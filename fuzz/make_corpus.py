#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/TARGET/.

Run with Debian's /usr/bin/python3 (python3-h2 builds the HTTP/2 seeds):
    /usr/bin/python3 fuzz/make_corpus.py
The files are committed; rerun this after changing an input format (the
control bytes each target's header comment describes) and commit the result.
"""

import os
import struct
import sys

import h2.config
import h2.connection
import h2.settings
import hpack

HERE = os.path.dirname(os.path.abspath(__file__))

# The fake file of fuzz_h1_request and fuzz_range_cond: ino 0x2a, 5 GiB,
# mtime 2020-02-02 02:02:02 UTC + 123 ns.
ETAG = '"2a-140000000-15ef7370ac9f847b"'
LASTMOD = "Sun, 02 Feb 2020 02:02:02 GMT"


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_h1_request: flags, 3 seed bytes, then the connection's bytes ----

def h1(name, text, flags=0, seed=1):
    write("fuzz_h1_request", name, bytes([flags, seed & 255, (seed >> 8) & 255, 0]) + text.encode("latin-1"))


def req(target="/big.bin", *headers, method="GET", version="1.1"):
    lines = ["%s %s HTTP/%s" % (method, target, version), "Host: localhost"] + list(headers)
    return "\r\n".join(lines) + "\r\n\r\n"


def h1_seeds():
    h1("get", req("/index.html"))
    h1("head", req("/index.html", method="HEAD"))
    h1("range_one", req("/big.bin", "Range: bytes=0-99"))
    h1("range_multi", req("/big.bin", "Range: bytes=0-0, 5-9,-10,100-"), flags=0x00, seed=7)
    h1("range_5g_tail", req("/sparse.bin", "Range: bytes=4831838208-4831838223"))
    h1("range_overlap", req("/big.bin", "Range: bytes=0-,0-,0-"))
    h1("range_17", req("/big.bin", "Range: bytes=" + ",".join("%d-%d" % (i * 10, i * 10 + 1) for i in range(17))))
    h1("range_unsat", req("/big.bin", "Range: bytes=99999999999-"), flags=0x0c)  # 1000-byte file
    h1("range_empty_file", req("/e", "Range: bytes=-5"), flags=0x04)
    h1("if_range_etag", req("/big.bin", "Range: bytes=1-2,4-5", "If-Range: " + ETAG))
    h1("if_range_date", req("/big.bin", "Range: bytes=1-2", "If-Range: " + LASTMOD))
    h1("if_none_match", req("/big.bin", "If-None-Match: W/\"x\", " + ETAG))
    h1("if_modified_since", req("/big.bin", "If-Modified-Since: " + LASTMOD))
    h1("if_match_star", req("/big.bin", "If-Match: *", "If-Unmodified-Since: Sunday, 02-Feb-20 02:02:02 GMT"))
    h1("if_match_fail", req("/big.bin", 'If-Match: "nope"'))
    h1("asctime", req("/big.bin", "If-Modified-Since: Sun Feb  2 02:02:02 2020"))
    h1("long_type_multi", req("/a.html", "Range: bytes=0-1,3-4"), flags=0x40)
    h1("pipeline", req("/a.txt") + req("/b.txt", method="HEAD") + req("/c.txt", "Range: bytes=-1"), seed=3)
    h1("http10", req("/a.txt", "Connection: keep-alive", version="1.0") + req("/b.txt", version="1.0"))
    h1("split_bytes", req("/a.txt", "User-Agent: curl/8", "Referer: https://x/"), seed=0xfffff)
    # request smuggling shapes and other refusals
    h1("cl_te", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + req("/a.txt"))
    h1("te_cl", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n0\r\n\r\n")
    h1("cl_cl", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\n")
    h1("te_gzip", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
    h1("te_http10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    h1("chunked_body", "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + req("/a.txt"))
    h1("bare_lf", "GET /a.txt HTTP/1.1\nHost: x\n\n")
    h1("obs_fold", "GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n")
    h1("space_colon", "GET /a.txt HTTP/1.1\r\nHost : x\r\n\r\n")
    h1("two_hosts", "GET /a.txt HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
    h1("http09", "GET /\r\n\r\n")
    h1("http2_preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    h1("version_99", "GET / HTTP/9.9\r\nHost: x\r\n\r\n")
    h1("joined_values", req("/big.bin", "If-None-Match: \"a\"", "If-None-Match: ", "If-None-Match:  " + ETAG + " "))
    # --precompressed: Accept-Encoding picks the fake file's coding
    h1("accept_encoding", req("/a.html", "Accept-Encoding: gzip, deflate, br, zstd", "Range: bytes=1-2")
       + req("/a.html", "Accept-Encoding: br;q=0.5, gzip;q=0.8, identity;q=0.9, *;q=0")
       + req("/a.html", "Accept-Encoding: x-gzip;q=1.0", "Accept-Encoding: BR;Q=0.999, zstd;q=2",
             "If-None-Match: \"5e36300a-140000000-gzip\""), seed=11)
    # targets
    for i, t in enumerate(["/../etc/passwd", "/%2e%2e/%2E%2e/x", "/a/./b/../c/", "https://h/a%2Fb?x#y",
                           "/.git/config", "/a%00b", "*", "/%252e%252e/", "/a//b///c", "http:///x",
                           "/%c0%ae%c0%ae/", "/a\\..\\b", "/sub/..", "/" + "a/" * 40]):
        h1("target_%02d" % i, req(t), flags=0x80 if i % 3 == 0 else 0, seed=i)
    h1("tight_limits", req("/" + "a" * 80, *["X-H%d: v" % i for i in range(12)]), flags=0x01)
    h1("loose_limits", req("/" + "b" * 5000, "X-Big: " + "c" * 20000), flags=0x02)


# ---- fuzz_range_cond: flags, then '\n'-separated values -------------------

def rc(name, flags, *values):
    write("fuzz_range_cond", name, bytes([flags]) + "\n".join(values).encode("latin-1"))


def range_cond_seeds():
    rc("all", 0, "bytes=0-99", ETAG, "*", LASTMOD, LASTMOD, ETAG)
    rc("multi", 0, "bytes=0-0, 5-9,,-10 ,100-", '"a", W/"b"', 'W/"x", ' + ETAG,
       "Sunday, 02-Feb-20 02:02:02 GMT", "Sun Feb  2 02:02:02 2020", LASTMOD)
    rc("big", 0, "bytes=18446744073709551614-18446744073709551615", "", "", "Fri, 31 Dec 9999 23:59:60 GMT",
       "Mon, 01 Jan 0001 00:00:00 GMT", "W/" + ETAG)
    rc("overflow", 0, "bytes=18446744073709551616-", '"unterminated', "*, \"a\"", "Sat, 29 Feb 2020 00:00:00 GMT",
       "Sun, 30 Feb 2020 00:00:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT")
    rc("suffix", 0x40, "BYTES = -500", "", "", "Sun, 06 Nov 1994 08:49:37 GMT")
    rc("absent", 0x3e, "bytes=5-1")
    rc("leap", 0x80, "bytes=-0", "*", "", "Thu, 01 Jan 1970 00:00:60 GMT", "Wednesday, 31-Dec-69 23:59:59 GMT")
    rc("epoch", 0xc0, "bytes=0-", "", "", "Fri, 31 Dec 9999 23:59:59 GMT", "", "Fri, 31 Dec 9999 23:59:59 GMT")
    rc("time", 0, "\x00\x00\x00\x80\xff\xff\xff\xff")


# ---- fuzz_config: a config file -------------------------------------------

def cf(name, text):
    write("fuzz_config", name, text.encode("latin-1"))


def config_seeds():
    cf("full", "# ktlsd.conf\nroot /srv/www\nlisten 127.0.0.1:8443\nlisten [::1]:8443\nlisten-plain :8080\n"
       "cert /etc/ktlsd/ec.pem\nkey /etc/ktlsd/ec.key\ncert rsa.pem\nkey rsa.key\nworkers = 4\n"
       "tls-protocols TLSv1.2 TLSv1.3\ntls-session-cache 0\nktls auto\nsendfile off\nh2 on\n"
       "h2-max-streams 100\nh2-buffer 65536\nmax-header-size 4096\nhandshake-timeout 2.5\n"
       "header-timeout=0.001\nidle-timeout 60\nsend-timeout 86400\nshutdown-grace 0\n"
       "access-log off\nerror-log \"/var/log/ktlsd error.log\" # quoted\nlog-level debug\npid-file 'x#y'\n")
    cf("errors_unknown", "root /a\nnot-a-key 1\n")
    cf("errors_cli_only", "config /etc/other.conf\n")
    cf("errors_range", "max-uri 63\n")
    cf("errors_quote", "root \"/a\n")
    cf("errors_after_quote", "root \"/a\" b\n")
    cf("listen_many", "".join("listen 10.0.0.%d:%d\n" % (i, 1000 + i) for i in range(18)))
    cf("certs_many", "".join("cert c%d\nkey k%d\n" % (i, i) for i in range(6)))
    cf("blank", "\n\n   \t# only comments\r\n")
    cf("values", "workers 1024\nworkers 1025\n")
    cf("ms", "idle-timeout 1.2345\n")
    cf("ipv6", "listen [fe80::1%eth0]:1\n")
    cf("crlf", "root /srv\r\nktls on\r\n")
    cf("nul", "root /a\x00b\nh2 maybe\n")


# ---- fuzz_h2_session: flags, seed, then the client's frames after the preface ----

def h2client():
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
    c.initiate_connection()
    return c


def hdrs(path, *extra, method="GET"):
    return [(b":method", method.encode()), (b":path", path.encode()), (b":scheme", b"https"),
            (b":authority", b"localhost")] + [(k.encode(), v.encode()) for k, v in extra]


def frame(ftype, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def h2seed(name, data, flags=0, seed=1):
    magic = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    assert data.startswith(magic)
    write("fuzz_h2_session", name, bytes([flags, seed]) + data[len(magic):])


def h2_seeds():
    c = h2client()
    c.send_headers(1, hdrs("/a.txt"), end_stream=True)
    h2seed("get", c.data_to_send())

    c = h2client()
    c.increment_flow_control_window(1 << 24)
    c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: (1 << 31) - 1})
    c.send_headers(1, hdrs("/big.bin"), end_stream=True)
    c.send_headers(3, hdrs("/big.bin", ("range", "bytes=0-99,1000-1099,-50")), end_stream=True)
    c.send_headers(5, hdrs("/index.html", method="HEAD"), end_stream=True)
    data = c.data_to_send()
    h2seed("big_window", data)
    h2seed("big_window_small_buf", data, flags=1)

    c = h2client()
    c.increment_flow_control_window(1 << 24)
    c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: (1 << 31) - 1})
    c.send_headers(1, hdrs("/big.bin"), end_stream=True)
    c.send_headers(3, hdrs("/big.bin", ("range", "bytes=60000-70000,100-")), end_stream=True)
    data = c.data_to_send()
    h2seed("shrink", data, flags=2)
    h2seed("shrink_interleave", data, flags=2 | 8, seed=5)
    h2seed("small_buf_interleave", data, flags=1 | 8, seed=9)
    h2seed("sendfile", data, flags=16)
    h2seed("sendfile_shrink", data, flags=16 | 2, seed=3)

    c = h2client()
    c.send_headers(1, hdrs("/big.bin"), end_stream=True)
    c.reset_stream(1)
    c.send_headers(3, hdrs("/a.txt", ("if-none-match", ETAG)), end_stream=True)
    data = c.data_to_send()
    h2seed("reset", data, flags=8)
    h2seed("reset_sendfile", data, flags=16 | 8)

    c = h2client()
    c.send_headers(1, hdrs("/sub"), end_stream=True)
    c.send_headers(3, hdrs("/.git/config"), end_stream=True)
    c.send_headers(5, hdrs("/../x"), end_stream=True)
    c.send_headers(7, hdrs("/a.txt", method="POST"), end_stream=False)
    c.send_data(7, b"body", end_stream=True)
    c.send_headers(9, hdrs("/a.txt", ("range", "bytes=0-1"), ("range", "bytes=2-3")), end_stream=True)
    c.send_headers(11, hdrs("/sub/"), end_stream=True)
    c.send_headers(13, hdrs("/empty.txt"), end_stream=True)
    c.send_headers(15, hdrs("/a.txt", ("if-match", '"x"')), end_stream=True)
    c.send_headers(17, hdrs("/a.txt", ("range", "bytes=5000-")), end_stream=True)
    data = c.data_to_send()
    h2seed("statuses", data, flags=4)
    h2seed("statuses_sendfile", data, flags=16)

    # The served root of fuzz_h2_session: index.html, a.txt, big.bin (1 MiB + 40000),
    # empty.txt, sub/index.html, nodir/, .hidden, link.txt, out, fifo.
    c = h2client()
    c.increment_flow_control_window(1 << 24)
    c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: (1 << 31) - 1})
    c.send_headers(1, hdrs("/big.bin", ("range", "bytes=0-99,300000-700000,-70000")), end_stream=True)
    c.send_headers(3, hdrs("/big.bin", ("range", "bytes=100000-400000")), end_stream=True)
    for i, path in enumerate(["/link.txt", "/nodir/", "/out", "/fifo", "/.hidden", "/sub/index.html", "/big.bin"]):
        c.send_headers(5 + 2 * i, hdrs(path), end_stream=True)
    data = c.data_to_send()
    h2seed("ranges", data)
    h2seed("ranges_dotfiles", data, flags=32)
    h2seed("ranges_big_buf", data, flags=128)
    h2seed("ranges_big_buf_shrink", data, flags=128 | 2 | 8, seed=4)

    # --precompressed (always on in fuzz_h2_session): a.txt.gz, big.bin.zst,
    # sub/index.html.br, sidecar.txt.br (no original), a.txt.br (leaves the
    # root), a.txt.zst/ (a directory).
    c = h2client()
    c.increment_flow_control_window(1 << 24)
    c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: (1 << 31) - 1})
    c.send_headers(1, hdrs("/a.txt", ("accept-encoding", "gzip, deflate, br, zstd")), end_stream=True)
    c.send_headers(3, hdrs("/big.bin", ("accept-encoding", "zstd"), ("range", "bytes=0-99,60000-")),
                   end_stream=True)
    c.send_headers(5, hdrs("/sub/", ("accept-encoding", "br;q=0.5"), ("accept-encoding", "gzip;q=0")),
                   end_stream=True)
    c.send_headers(7, hdrs("/sidecar.txt", ("accept-encoding", "br")), end_stream=True)
    c.send_headers(9, hdrs("/a.txt", ("accept-encoding", "br, zstd")), end_stream=True)
    c.send_headers(11, hdrs("/big.bin", ("accept-encoding", "*;q=0.1, identity;q=0.05")), end_stream=True)
    data = c.data_to_send()
    h2seed("precompressed", data)
    h2seed("precompressed_sendfile_shrink", data, flags=16 | 2, seed=6)

    c = h2client()
    c.increment_flow_control_window(1 << 24)
    c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: (1 << 31) - 1})
    c.send_headers(1, hdrs("/big.bin"), end_stream=True)
    c.send_headers(3, hdrs("/a.txt", ("x-long", "v" * 2000)), end_stream=True)
    c.send_headers(5, hdrs("/big.bin"), end_stream=True)
    h2seed("tight_limits", c.data_to_send(), flags=64)

    c = h2client()
    c.send_headers(1, hdrs("/a.txt", ("x-long", "v" * 2000)), end_stream=True)  # > --h2-max-header-list
    c.send_headers(3, hdrs("/index.html"), end_stream=True)
    h2seed("tight_header_list", c.data_to_send(), flags=64)

    c = h2client()
    c.send_headers(1, hdrs("/a.txt", ("x-big", "v" * 40000)), end_stream=True)  # CONTINUATION
    h2seed("continuation", c.data_to_send())

    c = h2client()
    c.ping(b"12345678")
    c.prioritize(1, weight=200, depends_on=0, exclusive=True)
    c.send_headers(3, hdrs("/index.html"), end_stream=True, priority_weight=16, priority_depends_on=1)
    c.close_connection()
    h2seed("ping_prio_goaway", c.data_to_send())

    # Hand-made: a CONTINUATION flood, an empty SETTINGS storm, a padded HEADERS.
    # Each with its own HPACK encoder: a block may only refer to table
    # entries an earlier block of the same input put there.
    base = h2client().data_to_send()
    block = hpack.Encoder().encode(hdrs("/a.txt"))
    flood = frame(1, 0x1, 1, block[:1]) + b"".join(frame(9, 0, 1, b"") for _ in range(10)) + frame(9, 0x4, 1, block[1:])
    h2seed("continuation_flood", base + flood)
    h2seed("settings_storm", base + frame(4, 0, 0, b"") * 40)
    padded = frame(1, 0x8 | 0x4 | 0x1, 1, bytes([5]) + hpack.Encoder().encode(hdrs("/index.html")) + b"\0" * 5)
    h2seed("padded_headers", base + padded)
    enc = hpack.Encoder()
    h2seed("rst_storm", base + b"".join(frame(1, 0x5, i, enc.encode(hdrs("/big.bin"))) + frame(3, 0, i, b"\0\0\0\x08")
                                        for i in range(1, 400, 2)))


def main():
    h1_seeds()
    range_cond_seeds()
    config_seeds()
    h2_seeds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
