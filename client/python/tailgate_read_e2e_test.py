"""End to end: the real tailgate sidecar, loopback HTTP replicas, and the
Python example client (plus the C++ tailgate_read) reading through it.

Replicas (http.server, one thread per request):
  fast   answers at once
  slow   answers after SLOW_DELAY, so a read whose primary is `slow` is
         hedged to `fast` after HEDGE_DELAY
Both serve /big with BIG_BODY bytes (over the sidecar's --max_response_bytes)
and take STALL seconds over /stall (past any deadline the test sets).
"""

import contextlib
import http.server
import io
import json
import queue
import re
import signal
import subprocess
import threading
import time
import unittest

import grpc

from client.python import tailgate_read
from proto.tailgate.v1 import tailgate_pb2
from proto.tailgate.v1 import tailgate_pb2_grpc

SLOW_DELAY = 0.5
HEDGE_DELAY_MS = 20
MAX_RESPONSE_BYTES = 1024
BIG_BODY = 64 * 1024
STALL = 3.0

SIDECAR = "server/tailgate"
CPP_CLIENT = "client/tailgate_read"

_LOGFMT_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


class Replica:
    """A loopback HTTP replica; the body names it and echoes the path."""

    def __init__(self, name, delay):
        self.name = name
        self.delay = delay
        self.stop = threading.Event()
        replica = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

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
        if path == "/missing":
            status, body = 404, b"no such thing\n"
        elif path == "/big":
            status, body = 200, b"x" * BIG_BODY
        else:
            status, body = 200, ("%s:%s" % (self.name, path)).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("X-Replica", self.name)
        handler.end_headers()
        if send_body:
            handler.wfile.write(body)

    def close(self):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


class Sidecar:
    """The real //server:tailgate on ephemeral ports, found from its
    `event=listening service=... addr=...` log lines."""

    def __init__(self, backends, extra_flags):
        self.process = subprocess.Popen(
            [SIDECAR, "--backends=" + ",".join(backends),
             "--listen=127.0.0.1:0", "--admin=127.0.0.1:0",
             "--metrics_listen=127.0.0.1:0"] + extra_flags,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
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


class TailgateReadEndToEndTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.fast = Replica("fast", delay=0)
        cls.slow = Replica("slow", delay=SLOW_DELAY)
        cls.sidecar = Sidecar(
            [cls.fast.url, cls.slow.url],
            ["--hedge_delay=%dms" % HEDGE_DELAY_MS,
             "--max_response_bytes=%d" % MAX_RESPONSE_BYTES,
             # Enough hedge budget for every read here, and circuits that
             # stay closed through the deliberate failures.
             "--hedge_burst=50", "--hedge_fraction=1",
             "--failure_threshold=1000", "--timeout=10s",
             "--drain_timeout=1s"])
        cls.channel = grpc.insecure_channel(cls.sidecar.target)
        cls.stub = tailgate_pb2_grpc.HedgedReadStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        exit_code = cls.sidecar.close()
        cls.fast.close()
        cls.slow.close()
        if exit_code != 0:
            raise AssertionError("sidecar exited %s:\n%s" %
                                 (exit_code, "".join(cls.sidecar.log)))

    def run_example(self, *argv):
        """Runs the Python example in-process: (exit code, stdout, stderr)."""
        out, err = io.BytesIO(), io.StringIO()
        code = tailgate_read.main(["--target=" + self.sidecar.target] +
                                  list(argv), out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def run_cpp_client(self, *argv):
        result = subprocess.run([CPP_CLIENT] + list(argv),
                                capture_output=True, timeout=30)
        return result.returncode, result.stdout, result.stderr.decode()

    def test_reads_the_body_through_the_sidecar(self):
        # Whichever replica is primary, `fast` answers first.
        for _ in range(2):
            code, body, err = self.run_example("/hello")
            self.assertEqual((code, err), (0, ""))
            self.assertEqual(body, b"fast:/hello")

    def test_slow_primary_is_hedged_and_the_hedge_wins(self):
        traces = []
        for _ in range(4):  # rotation makes `slow` the primary of some
            response = self.stub.Read(
                tailgate_pb2.ReadRequest(path="/hedge-me"), timeout=5)
            self.assertEqual(response.status, 200)
            self.assertEqual(response.body, b"fast:/hedge-me")
            traces.append(response.trace)
        for trace in traces:
            self.assertEqual(trace.replica, self.fast.url)
            self.assertLess(trace.latency.ToMilliseconds(), SLOW_DELAY * 1000)
        # Rotation makes `slow` the primary of about half the reads: those
        # are hedged to `fast` after HEDGE_DELAY, and the hedge answers. (A
        # `fast` primary slower than HEDGE_DELAY is hedged too, and wins.)
        won = [t for t in traces if t.hedge_won]
        self.assertTrue(won, traces)
        for trace in won:
            self.assertGreaterEqual(trace.latency.ToMilliseconds(),
                                    HEDGE_DELAY_MS)
        for trace in traces:
            self.assertEqual(trace.attempts, 2 if trace.hedged else 1, trace)
            if trace.hedge_won:
                self.assertTrue(trace.hedged, trace)

    def test_verbose_prints_the_trace(self):
        code, _, err = self.run_example("-v", "-H", "Accept: text/plain",
                                        "/verbose")
        self.assertEqual(code, 0)
        self.assertIn("< HTTP 200\n", err)
        self.assertRegex(err, r"\* trace attempts=[12] hedged=(true|false) "
                         r"hedge_won=(true|false) replica=%s latency=" %
                         re.escape(self.fast.url))

    def test_head_has_no_body(self):
        code, body, _ = self.run_example("--head", "/head")
        self.assertEqual((code, body), (0, b""))

    def test_http_404_is_forwarded_with_exit_code_4(self):
        code, body, _ = self.run_example("/missing")
        self.assertEqual(code, tailgate_read.EXIT_HTTP_4XX)
        self.assertEqual(body, b"no such thing\n")

    def test_oversized_body_is_resource_exhausted(self):
        code, body, err = self.run_example("/big")
        self.assertEqual(code, 12)
        self.assertEqual(body, b"")
        self.assertIn("RESOURCE_EXHAUSTED", err)
        self.assertIn(str(MAX_RESPONSE_BYTES), err)  # the limit is named
        self.assertEqual(err.count("\n"), 1)

    def test_deadline_is_deadline_exceeded(self):
        start = time.monotonic()
        code, body, err = self.run_example("--deadline=200ms", "/stall")
        self.assertEqual(code, 14)
        self.assertEqual(body, b"")
        self.assertIn("DEADLINE_EXCEEDED", err)
        self.assertLess(time.monotonic() - start, STALL)

    def test_unknown_upstream_is_not_found(self):
        code, _, err = self.run_example("--upstream=nowhere", "/x")
        self.assertEqual(code, 11)
        self.assertIn("NOT_FOUND", err)

    def test_rejected_header_is_invalid_argument(self):
        code, _, err = self.run_example("-H", "Host: elsewhere", "/x")
        self.assertEqual(code, 10)
        self.assertIn("INVALID_ARGUMENT", err)

    def test_bad_arguments_exit_2(self):
        for argv in (["relative"], ["--deadline=soon", "/x"],
                     ["--no-hedge", "--hedge-delay=5ms", "/x"]):
            with self.assertRaises(SystemExit) as exited, \
                    contextlib.redirect_stderr(io.StringIO()):
                tailgate_read.main(argv)
            self.assertEqual(exited.exception.code, 2, argv)

    def test_cpp_client_reads_and_reports_the_trace(self):
        code, body, err = self.run_cpp_client(
            "--target=" + self.sidecar.target, "-v", "/cpp")
        self.assertEqual(code, 0, err)
        self.assertEqual(body, b"fast:/cpp")
        self.assertIn("< HTTP 200\n", err)
        self.assertIn("replica=%s " % self.fast.url, err)

    def test_cpp_client_exit_codes(self):
        target = "--target=" + self.sidecar.target
        self.assertEqual(self.run_cpp_client(target, "/missing")[0], 4)
        self.assertEqual(self.run_cpp_client(target, "/big")[0], 12)
        self.assertEqual(
            self.run_cpp_client(target, "--deadline=200ms", "/stall")[0], 14)

    def test_cpp_client_admin_stats_and_metrics(self):
        self.run_example("/counted")
        admin = "--admin=" + self.sidecar.admin
        code, out, err = self.run_cpp_client(admin, "stats", "--json")
        self.assertEqual(code, 0, err)
        stats = json.loads(out)
        self.assertGreaterEqual(stats["requests"], 1)
        self.assertEqual({r["url"] for r in stats["replicas"]},
                         {self.fast.url, self.slow.url})
        code, out, err = self.run_cpp_client(admin, "metrics")
        self.assertEqual(code, 0, err)
        self.assertIn(b"tailgate_requests_total", out)


if __name__ == "__main__":
    unittest.main()
