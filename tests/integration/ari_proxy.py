#!/usr/bin/env python3
"""A CA with RFC 9773 renewal information, for t_acme.sh: Debian's pebble
2.4.0 has none. Every request goes on to pebble unchanged, its Host field
too (pebble makes its URLs from Host and checks each JWS's "url" against
it, so the client sees one CA at this address); the directory gains
"renewalInfo", and GET renewal-info/ID is answered here, from WINDOWS:
lines "ID START END" (Unix times), the line whose ID is "*" for any other.
Its meta lists two profiles, "classic" and "shortlived".

Appends to LOG "ari ID" for each renewalInfo request and "order PAYLOAD"
for each newOrder's JWS payload, for the test to read.

usage: ari_proxy.py PORT PEBBLE_PORT CERT KEY WINDOWS LOG
"""
import base64
import http.client
import http.server
import json
import ssl
import sys
import time
import urllib.parse

PORT, UPSTREAM, CERT, KEY, WINDOWS, LOG = sys.argv[1:7]
DROP = ("connection", "content-length", "transfer-encoding")
new_order_path = "/order-plz"


def note(line):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def window_of(cert_id):
    rows = {}
    with open(WINDOWS, encoding="utf-8") as f:
        for line in f:
            if line.split():
                ident, start, end = line.split()
                rows[ident] = (int(start), int(end))
    return rows.get(cert_id, rows["*"])


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    def forward(self, body):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # pebble on loopback, the test's own
        c = http.client.HTTPSConnection("127.0.0.1", int(UPSTREAM), context=ctx, timeout=30)
        fields = {k: v for k, v in self.headers.items() if k.lower() not in DROP}
        c.request(self.command, self.path, body=body, headers=fields)
        r = c.getresponse()
        data = r.read()
        out = [(k, v) for k, v in r.getheaders() if k.lower() not in DROP]
        c.close()
        return r.status, out, data

    def any_method(self):
        global new_order_path
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if self.command == "GET" and self.path.startswith("/renewal-info/"):
            cert_id = self.path[len("/renewal-info/"):]
            note("ari " + cert_id)
            start, end = window_of(cert_id)
            doc = {"suggestedWindow": {"start": rfc3339(start), "end": rfc3339(end)}}
            self.reply(200, [("Content-Type", "application/json"), ("Retry-After", "21600")],
                       json.dumps(doc).encode())
            return
        if self.command == "POST" and body and self.path == new_order_path:
            payload = json.loads(body)["payload"]
            payload += "=" * (-len(payload) % 4)
            note("order " + base64.urlsafe_b64decode(payload).decode())
        status, headers, data = self.forward(body)
        if self.command == "GET" and self.path == "/dir" and status == 200:
            d = json.loads(data)
            new_order_path = urllib.parse.urlsplit(d["newOrder"]).path
            d["renewalInfo"] = "https://%s/renewal-info/" % self.headers["Host"]
            d.setdefault("meta", {})["profiles"] = {
                "classic": "the default", "shortlived": "6 days"}
            data = json.dumps(d).encode()
        self.reply(status, headers, data)

    do_GET = do_POST = do_HEAD = any_method


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
