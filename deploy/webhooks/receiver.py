#!/usr/bin/env python3
"""A BeaconMesh webhook receiver: checks each POST's signature, drops duplicates by event id, logs one line per event.

    python3 receiver.py PORT SECRET_FILE [CERT.pem KEY.pem]

Serves https:// with a certificate and key, plain http:// on 127.0.0.1 without (BeaconMesh posts plain http only to a
loopback address). A bad or stale signature is answered 401, which BeaconMesh does not retry; a duplicate 200 again.
"""
import hashlib, hmac, json, ssl, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, SECRET = int(sys.argv[1]), open(sys.argv[2], "rb").read().rstrip(b"\r\n")
seen = set()


def verified(timestamp, signature, body):
    expected = "sha256=" + hmac.new(SECRET, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature) and abs(time.time() - int(timestamp)) < 300


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        event_id = self.headers.get("BeaconMesh-Event-Id", "")
        if not verified(self.headers.get("BeaconMesh-Timestamp", "0"), self.headers.get("BeaconMesh-Signature", ""), body):
            print(f"refused {event_id}: bad signature", flush=True)
            self.send_response(401)
        elif event_id in seen:
            print(f"duplicate {event_id}", flush=True)
            self.send_response(200)
        else:
            seen.add(event_id)
            event = json.loads(body)
            member = (event.get("member") or {}).get("id", "-") if isinstance(event.get("member"), dict) else event.get("member", "-")
            print(f"{event.get('type', 'alert')} {event_id} store {event.get('store', '-')} member {member}", flush=True)
            self.send_response(204)
        # An answer's length, so the client need not read to the connection's end (over TLS an unclean end is an error).
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1" if len(sys.argv) < 5 else "0.0.0.0", PORT), Hook)
if len(sys.argv) >= 5:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"listening on {PORT}", flush=True)
server.serve_forever()
