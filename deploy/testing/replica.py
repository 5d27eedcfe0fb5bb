#!/usr/bin/env python3
"""A loopback replica for deploy/test-pod: answers every GET with its name
("replica a"), and /slow after SLOW_SECONDS, so that a read is in flight
when the pod is stopped. Prints "listening" once it serves and "slow" when
a /slow request arrives.

Usage: replica.py NAME PORT
"""

import http.server
import sys
import time

SLOW_SECONDS = 2.0


def main():
    name, port = sys.argv[1], int(sys.argv[2])
    body = f"replica {name}\n".encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.path == "/slow":
                print("slow", flush=True)
                time.sleep(SLOW_SECONDS)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *unused):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print("listening", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
