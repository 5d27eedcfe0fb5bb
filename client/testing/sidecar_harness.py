"""Test harness for client examples: the real //server:tailgate on
ephemeral loopback ports, in front of loopback HTTP replicas.

Replica paths (GET and HEAD; `delay` applies to every path):
  /stall         answers after STALL seconds (past any deadline a test sets)
  /status/NNN    answers HTTP NNN, body "NAME:/status/NNN"
  /big           200 with BIG_BODY bytes
  /bytes/N       200 with N bytes
  /missing       404, body "no such thing\\n"
  /latin1        200 with `X-Latin1: caf\\xe9`, a value in ISO-8859-1
  anything else  200, body "NAME:PATH"
Every answer carries `Content-Type: text/plain` and `X-Replica: NAME`.
"""

import http.server
import queue
import re
import signal
import subprocess
import threading
import time

STALL = 3.0
BIG_BODY = 64 * 1024
SIDECAR = "server/tailgate"  # runfiles path, for tests with it in `data`

_LOGFMT_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')
_STATUS_PATH = re.compile(r"^/status/([1-5][0-9][0-9])$")
_BYTES_PATH = re.compile(r"^/bytes/([0-9]{1,9})$")


class Replica:
    """A loopback HTTP/1.1 replica, one thread per request."""

    def __init__(self, name, delay=0.0):
        self.name = name
        self.delay = delay
        self.stop = threading.Event()
        replica = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body are two writes: without TCP_NODELAY the body
            # waits for the delayed ACK of the headers (about 40 ms).
            disable_nagle_algorithm = True

            def do_GET(self):
                replica.serve(self, send_body=True)

            def do_HEAD(self):
                replica.serve(self, send_body=False)

            def log_message(self, *unused):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, *unused):
                pass  # cancelled attempts close the connection mid-answer

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def serve(self, handler, send_body):
        path = handler.path
        if path == "/stall":
            self.stop.wait(STALL)
        elif self.delay:
            self.stop.wait(self.delay)
        status_path = _STATUS_PATH.match(path)
        bytes_path = _BYTES_PATH.match(path)
        if bytes_path:
            status, body = 200, b"b" * int(bytes_path.group(1))
        elif status_path:
            status = int(status_path.group(1))
            body = ("%s:%s" % (self.name, path)).encode()
        elif path == "/missing":
            status, body = 404, b"no such thing\n"
        elif path == "/big":
            status, body = 200, b"x" * BIG_BODY
        else:
            status, body = 200, ("%s:%s" % (self.name, path)).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("X-Replica", self.name)
        if path == "/latin1":  # http.server writes header text as Latin-1
            handler.send_header("X-Latin1", "caf\xe9")
        handler.end_headers()
        if send_body:
            handler.wfile.write(body)

    def close(self):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()


class Sidecar:
    """The real sidecar, its addresses read from its `event=listening
    service=... addr=...` log lines: `target` (HedgedRead, health,
    reflection), `admin` (Admin) and `metrics` (HTTP). `log` holds every
    stderr line. `close()` sends SIGTERM and returns the exit code.
    `preexec_fn` runs in the child before the sidecar starts (to set
    resource limits, say)."""

    def __init__(self, backends, extra_flags=(), binary=SIDECAR,
                 preexec_fn=None):
        self.process = subprocess.Popen(
            [binary, "--backends=" + ",".join(backends),
             "--listen=127.0.0.1:0", "--admin=127.0.0.1:0",
             "--metrics_listen=127.0.0.1:0"] + list(extra_flags),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
        self.log = []
        self.listening = {}
        events = queue.Queue()
        self.reader = threading.Thread(target=self._read_log, args=(events,),
                                       daemon=True)
        self.reader.start()
        deadline = time.monotonic() + 30
        while not {"grpc", "admin", "metrics"} <= self.listening.keys():
            remaining = deadline - time.monotonic()
            try:
                fields = events.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                fields = None
            if fields is None:  # the log ended or took too long
                self.close()
                raise RuntimeError("sidecar did not start:\n" +
                                   "".join(self.log))
            if fields.get("event") == "listening":
                self.listening[fields["service"]] = fields["addr"]
        self.target = self.listening["grpc"]
        self.admin = self.listening["admin"]
        self.metrics = self.listening["metrics"]

    def _read_log(self, events):
        for line in self.process.stderr:
            self.log.append(line)
            events.put({key: value.strip('"') for key, value
                        in _LOGFMT_FIELD.findall(line)})
        events.put(None)

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(timeout=5)
        return self.process.returncode

    def close_expecting_success(self):
        """close(), raising AssertionError with the log unless it exits 0."""
        exit_code = self.close()
        if exit_code != 0:
            raise AssertionError("sidecar exited %s:\n%s" %
                                 (exit_code, "".join(self.log)))

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()
