"""End to end: the real tailgate sidecar, loopback HTTP replicas, and the
Python example client (plus the C++ tailgate_read) reading through it.

Replicas (client/testing/sidecar_harness.py lists the paths they serve):
  fast   answers at once
  slow   answers after SLOW_DELAY, so a read whose primary is `slow` is
         hedged to `fast` after HEDGE_DELAY (once `slow` has cost a read
         that, load-aware choice keeps primaries off it for a while)
/big is over the sidecar's --max_response_bytes; /stall outlasts any
deadline the test sets.
"""

import contextlib
import io
import json
import re
import subprocess
import time
import unittest

import grpc

from client.python import tailgate_read
from client.testing import sidecar_harness
from client.testing.sidecar_harness import Replica, Sidecar
from proto.tailgate.v1 import tailgate_pb2
from proto.tailgate.v1 import tailgate_pb2_grpc

SLOW_DELAY = 0.5
HEDGE_DELAY_MS = 20
MAX_RESPONSE_BYTES = 1024
STALL = sidecar_harness.STALL

CPP_CLIENT = "client/tailgate_read"

SIDECAR_FLAGS = [
    "--hedge_delay=%dms" % HEDGE_DELAY_MS,
    "--max_response_bytes=%d" % MAX_RESPONSE_BYTES,
    # Enough hedge budget for every read here, and circuits that stay
    # closed through the deliberate failures.
    "--hedge_burst=50", "--hedge_fraction=1",
    "--failure_threshold=1000", "--timeout=10s",
    "--drain_timeout=1s"]


class TailgateReadEndToEndTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.fast = Replica("fast", delay=0)
        cls.slow = Replica("slow", delay=SLOW_DELAY)
        cls.sidecar = Sidecar([cls.fast.url, cls.slow.url], SIDECAR_FLAGS)
        cls.channel = grpc.insecure_channel(cls.sidecar.target)
        cls.stub = tailgate_pb2_grpc.HedgedReadStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        try:
            cls.sidecar.close_expecting_success()
        finally:
            cls.fast.close()
            cls.slow.close()

    def run_example(self, *argv):
        """Runs the Python example in-process: (exit code, stdout, stderr)."""
        out, err = io.BytesIO(), io.StringIO()
        code = tailgate_read.main(["--target=" + self.sidecar.target] +
                                  list(argv), out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def run_cpp_client(self, *argv, stdin=None):
        result = subprocess.run([CPP_CLIENT] + list(argv), input=stdin,
                                capture_output=True, timeout=30)
        return result.returncode, result.stdout, result.stderr.decode()

    def assert_one_line_per_read(self, out, paths):
        """`out`'s lines, one per read, keyed by index: the fields."""
        lines = {}
        for line in out.decode().splitlines():
            fields = line.split(" ", 4)
            index = int(fields[0])
            self.assertNotIn(index, lines, out)
            self.assertEqual(fields[3], paths[index], line)
            lines[index] = fields
        self.assertEqual(sorted(lines), list(range(len(paths))), out)
        return lines

    def test_reads_the_body_through_the_sidecar(self):
        # Whichever replica is primary, `fast` answers first.
        for _ in range(2):
            code, body, err = self.run_example("/hello")
            self.assertEqual((code, err), (0, ""))
            self.assertEqual(body, b"fast:/hello")

    def test_slow_primary_is_hedged_and_the_hedge_wins(self):
        # A sidecar of its own with `slow` listed first: neither replica has
        # a cost yet, and equal costs go by rotation from the first, so the
        # first read starts on `slow`. (The shared sidecar has long learnt
        # what `slow` costs and starts its reads on `fast`.)
        sidecar = Sidecar([self.slow.url, self.fast.url], SIDECAR_FLAGS)
        try:
            with grpc.insecure_channel(sidecar.target) as channel:
                stub = tailgate_pb2_grpc.HedgedReadStub(channel)
                traces = []
                for _ in range(3):
                    response = stub.Read(
                        tailgate_pb2.ReadRequest(path="/hedge-me"), timeout=5)
                    self.assertEqual(response.status, 200)
                    self.assertEqual(response.body, b"fast:/hedge-me")
                    traces.append(response.trace)
        finally:
            try:
                sidecar.close_expecting_success()
            finally:
                sidecar.process.stderr.close()  # its log reader has ended
        for trace in traces:
            self.assertEqual(trace.replica, self.fast.url)
            self.assertLess(trace.latency.ToMilliseconds(), SLOW_DELAY * 1000)
        # The first read started on `slow`: hedged to `fast` after
        # HEDGE_DELAY, and the hedge answered.
        first = traces[0]
        self.assertTrue(first.hedged, first)
        self.assertTrue(first.hedge_won, first)
        self.assertEqual(first.attempts, 2, first)
        self.assertGreaterEqual(first.latency.ToMilliseconds(), HEDGE_DELAY_MS)
        # Its cancelled attempt made `slow` costly: the next reads start on
        # `fast` (the third would be `slow`'s by rotation) and need no hedge.
        for trace in traces[1:]:
            self.assertEqual(trace.attempts, 1, trace)
            self.assertFalse(trace.hedged, trace)

    def test_latin1_header_value_arrives_as_utf8(self):
        # Not valid UTF-8 from the replica; a proto3 string must be, or
        # this client could not parse the response at all.
        response = self.stub.Read(tailgate_pb2.ReadRequest(path="/latin1"),
                                  timeout=5)
        self.assertEqual(response.status, 200)
        values = [h.value for h in response.headers if h.name == "x-latin1"]
        self.assertEqual(values, ["caf\u00e9"])

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

    def test_many_prints_a_line_per_read(self):
        paths = ["/one", "/missing", "/big", "/two"]
        code, out, err = self.run_example("--many", "--max-in-flight=2",
                                          *paths)
        self.assertEqual(err, "")
        lines = self.assert_one_line_per_read(out, paths)
        self.assertEqual(lines[0][1:3], ["200", str(len(b"fast:/one"))])
        self.assertEqual(lines[1][1:3], ["404", str(len(b"no such thing\n"))])
        self.assertEqual(lines[2][1:3], ["RESOURCE_EXHAUSTED", "-"])
        self.assertIn(str(MAX_RESPONSE_BYTES), lines[2][4])  # the limit
        self.assertEqual(lines[3][1:3], ["200", str(len(b"fast:/two"))])
        # The failed read of lowest index decides: the 404.
        self.assertEqual(code, tailgate_read.EXIT_HTTP_4XX)

    def test_many_reads_paths_from_stdin(self):
        out, err = io.BytesIO(), io.StringIO()
        code = tailgate_read.main(
            ["--target=" + self.sidecar.target, "--many"], out=out, err=err,
            inp=io.StringIO("/a\r\n\n/b\n"))
        self.assertEqual((code, err.getvalue()), (0, ""))
        lines = self.assert_one_line_per_read(out.getvalue(), ["/a", "/b"])
        self.assertEqual(lines[1][1], "200")

    def test_many_deadline_ends_the_batch_after_the_reads_that_came(self):
        start = time.monotonic()
        code, out, err = self.run_example("--many", "--deadline=1s",
                                          "/stall", "/quick")
        self.assertEqual(code, 14, err)
        self.assertLess(time.monotonic() - start, STALL)
        # /quick's line came as it completed, before the deadline.
        self.assertIn(b"1 200 %d /quick\n" % len(b"fast:/quick"), out)
        self.assertNotIn(b" 200 ", out.replace(b"1 200 ", b""))
        # Whichever sees the deadline first: the sidecar ends /stall's read
        # (its item DEADLINE_EXCEEDED, the call OK), or the client's timer
        # ends the call (DEADLINE_EXCEEDED on stderr).
        stalled_item = re.search(rb"^0 DEADLINE_EXCEEDED - /stall ", out,
                                 re.MULTILINE)
        self.assertTrue(stalled_item or "DEADLINE_EXCEEDED" in err,
                        (out, err))

    def test_cpp_client_many_fails_only_the_bad_reads(self):
        target = "--target=" + self.sidecar.target
        paths = ["/c0", "no-slash", "/missing", "/c3"]
        code, out, err = self.run_cpp_client(target, "many", *paths)
        self.assertEqual(err, "")
        lines = self.assert_one_line_per_read(out, paths)
        self.assertEqual(lines[0][1:3], ["200", str(len(b"fast:/c0"))])
        self.assertEqual(lines[1][1:3], ["INVALID_ARGUMENT", "-"])
        self.assertEqual(lines[2][1], "404")
        self.assertEqual(lines[3][1], "200")
        self.assertEqual(code, 10)  # read 1's INVALID_ARGUMENT
        # From stdin, with the trace.
        code, out, err = self.run_cpp_client(target, "-v", "many",
                                             stdin=b"/s0\n/s1\n")
        self.assertEqual((code, err), (0, ""))
        lines = self.assert_one_line_per_read(out, ["/s0", "/s1"])
        self.assertIn("replica=%s " % self.fast.url, lines[0][4])

    def test_cpp_client_many_over_the_batch_limit(self):
        paths = b"".join(b"/k/%d\n" % i for i in range(1001))
        code, out, err = self.run_cpp_client(
            "--target=" + self.sidecar.target, "many", stdin=paths)
        self.assertEqual((code, out), (10, b""))
        self.assertIn("INVALID_ARGUMENT", err)
        self.assertIn("1000", err)  # the limit is named

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
