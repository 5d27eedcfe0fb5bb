"""End to end: the Node.js example client against the real tailgate sidecar
and loopback HTTP replicas (client/testing/sidecar_harness.py).

Replicas:
  fast   answers at once
  slow   answers after SLOW_DELAY, so a read whose primary is `slow` is
         hedged to `fast` after the read's hedge delay (10ms) and `fast`
         answers
/big is over the sidecar's --max_response_bytes; /stall outlasts every
deadline here.

The client runs once per sidecar (node, NODE_PATH pointing at the npm
packages tools/bootstrap installs; TAILGATE_NODE_MODULES overrides it) and
prints one line per call; each test checks some of those lines.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from client.testing import sidecar_harness
from client.testing.sidecar_harness import Replica, Sidecar

SLOW_DELAY = 0.5
READ_HEDGE_DELAY_MS = 10  # the client's per-read hedge delay
MAX_RESPONSE_BYTES = 1024
STALL = sidecar_harness.STALL

CLIENT = "client/node/tailgate_example.js"  # runfiles paths
PROTO_ROOT = "."                            # holds proto/tailgate/v1/
NODE_MODULES = os.environ.get("TAILGATE_NODE_MODULES",
                              "/opt/tailgate/npm/node_modules")
SIDECAR_FLAGS = [
    "--hedge_delay=20ms",
    "--max_response_bytes=%d" % MAX_RESPONSE_BYTES,
    # Hedge budget for every read here, and circuits that stay closed
    # through the deliberate failures.
    "--hedge_burst=50", "--hedge_fraction=1", "--failure_threshold=1000",
    "--timeout=10s", "--drain_timeout=1s",
]

_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def parse_line(line):
    """'kind a=1 b="x y"' -> ('kind', {'a': '1', 'b': 'x y'})."""
    kind, _, rest = line.partition(" ")
    fields = {}
    for name, value in _FIELD.findall(rest):
        fields[name] = json.loads(value) if value.startswith('"') else value
    return kind, fields


def run_client(target, admin, *argv):
    """Runs the example: (exit code, [(kind, fields)], stdout, stderr)."""
    home = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "NODE_PATH": NODE_MODULES}
    node = shutil.which("node", path=env["PATH"]) or "/usr/bin/node"
    result = subprocess.run(
        [node, CLIENT, "--target=" + target, "--admin=" + admin,
         "--proto_root=" + os.path.abspath(PROTO_ROOT)] + list(argv),
        env=env, capture_output=True, text=True, timeout=60)
    print(result.stdout, end="")  # kept in the test log
    lines = [parse_line(line) for line in result.stdout.splitlines()]
    return result.returncode, lines, result.stdout, result.stderr


class NodeClientEndToEndTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.fast = Replica("fast", delay=0)
        cls.slow = Replica("slow", delay=SLOW_DELAY)
        cls.sidecar = Sidecar([cls.fast.url, cls.slow.url], SIDECAR_FLAGS)
        cls.code, cls.lines, cls.stdout, cls.stderr = run_client(
            cls.sidecar.target, cls.sidecar.admin)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.sidecar.close_expecting_success()
        finally:
            cls.fast.close()
            cls.slow.close()

    def line(self, kind, call=None, **match):
        """The one line of `kind` whose `call` (and other fields) match."""
        found = [f for k, f in self.lines if k == kind and
                 (call is None or f.get("call") == call) and
                 all(f.get(n) == v for n, v in match.items())]
        self.assertEqual(len(found), 1, "want one %s %s line in:\n%s" %
                         (kind, call, self.stdout))
        return found[0]

    def assert_trace(self, read):
        """attempts is 2 exactly when hedged; a won hedge was launched."""
        self.assertIn(read["hedged"], ("true", "false"), read)
        self.assertIn(read["hedge_won"], ("true", "false"), read)
        hedged = read["hedged"] == "true"
        self.assertEqual(read["attempts"], "2" if hedged else "1", read)
        if read["hedge_won"] == "true":
            self.assertEqual(read["hedged"], "true", read)

    def test_client_ran_every_call_cleanly(self):
        self.assertEqual(self.code, 0, self.stdout + self.stderr)
        self.assertEqual(self.stderr, "")  # no loader warnings either
        self.assertEqual(
            [k for k, _ in self.lines],
            ["read"] * 6 + ["error"] * 4 + ["cancel"] + ["health"] * 2 +
            ["reflection", "read", "stats"] + ["item"] * 4 + ["batch"],
            self.stdout)

    def test_plain_read(self):
        read = self.line("read", "read")
        # Whichever replica is primary, `fast` answers first.
        self.assertEqual(read["status"], "200")
        self.assertEqual(read["body"], "fast:/plain")
        self.assertEqual(read["x_replica"], "fast")  # a lower-case header name
        self.assertEqual(read["replica"], self.fast.url)
        self.assert_trace(read)

    def test_slow_primary_is_hedged_and_the_hedge_wins(self):
        read = self.line("read", "hedged")
        self.assertEqual(read["status"], "200")
        self.assertEqual(read["body"], "fast:/hedge-me")
        self.assertEqual((read["attempts"], read["hedged"], read["hedge_won"]),
                         ("2", "true", "true"))
        self.assertEqual(read["replica"], self.fast.url)
        latency = float(read["latency_ms"])
        self.assertGreaterEqual(latency, READ_HEDGE_DELAY_MS)
        self.assertLess(latency, SLOW_DELAY * 1000)
        # Rotation: of two reads in a row, one starts on `slow`.
        self.assertLessEqual(int(read["reads"]), 6)

    def test_head_has_an_empty_body(self):
        read = self.line("read", "head")
        self.assertEqual((read["status"], read["body"], read["body_bytes"]),
                         ("200", "", "0"))
        self.assertEqual(read["x_replica"], "fast")
        self.assert_trace(read)

    def test_latin1_header_value_arrives_as_utf8(self):
        read = self.line("read", "latin1")
        self.assertEqual((read["status"], read["x_latin1"]), ("200", "caf\xe9"))

    def test_http_404_is_ok_with_status_404(self):
        read = self.line("read", "missing")
        self.assertEqual((read["status"], read["body"]),
                         ("404", "no such thing\n"))

    def test_503_from_every_replica_is_ok_with_status_503(self):
        read = self.line("read", "all_503")
        self.assertEqual(read["status"], "503")
        self.assertRegex(read["body"], r"^(fast|slow):/status/503$")
        # The primary's 503 earns a fallback; its 503 is no win.
        self.assertEqual((read["attempts"], read["hedged"], read["hedge_won"]),
                         ("2", "true", "false"))

    def test_error_per_status_class(self):
        error = self.line("error", "invalid_argument")
        self.assertEqual(error["code"], "INVALID_ARGUMENT")
        self.assertIn("Host", error["message"])
        error = self.line("error", "not_found")
        self.assertEqual(error["code"], "NOT_FOUND")
        self.assertIn("nowhere", error["message"])
        error = self.line("error", "too_large")
        self.assertEqual(error["code"], "RESOURCE_EXHAUSTED")
        self.assertIn(str(MAX_RESPONSE_BYTES), error["message"])  # the limit
        error = self.line("error", "deadline")
        self.assertEqual(error["code"], "DEADLINE_EXCEEDED")
        # The sidecar may answer a hair before the client's own timer.
        self.assertGreaterEqual(int(error["elapsed_ms"]), 200 - 5)
        self.assertLess(int(error["elapsed_ms"]), STALL * 1000)

    def test_cancel_reaches_the_sidecar(self):
        cancel = self.line("cancel", "stall")
        self.assertEqual(cancel["code"], "CANCELLED")
        self.assertEqual(int(cancel["cancelled_after"]),
                         int(cancel["cancelled_before"]) + 1)

    def test_health_on_both_listeners(self):
        listen = self.line("health", port="listen")
        self.assertEqual((listen["service"], listen["status"]),
                         ("", "SERVING"))
        admin = self.line("health", port="admin")
        self.assertEqual((admin["service"], admin["status"]),
                         ("tailgate.v1.Admin", "SERVING"))

    def test_reflection_builds_a_client_without_the_proto(self):
        reflection = self.line("reflection")
        # v1 where the sidecar serves it, v1alpha otherwise.
        self.assertIn(reflection["version"], ("v1", "v1alpha"))
        services = reflection["services"].split(",")
        self.assertIn("tailgate.v1.HedgedRead", services)
        self.assertIn("grpc.health.v1.Health", services)
        files = reflection["files"].split(",")
        self.assertTrue(
            any(f.endswith("tailgate/v1/tailgate.proto") for f in files), files)
        self.assertIn("google/protobuf/duration.proto", files)
        read = self.line("read", "reflected")
        self.assertEqual((read["status"], read["body"], read["replica"]),
                         ("200", "fast:/reflected", self.fast.url))
        # Field names as in the .proto (hedge_won), headers included.
        self.assertEqual(read["x_replica"], "fast")
        self.assert_trace(read)

    def test_stats_count_what_the_client_did(self):
        stats = self.line("stats")
        hedged_reads = int(self.line("read", "hedged")["reads"])
        # Admitted: read, the hedged reads, head, latin1, missing, all_503,
        # too_large, deadline, cancel and reflected (the invalid descriptor
        # and the unknown upstream are refused before admission).
        self.assertEqual(int(stats["requests"]), hedged_reads + 9)
        self.assertGreaterEqual(int(stats["hedges"]), 2)  # hedged, all_503
        self.assertGreaterEqual(int(stats["hedge_wins"]), 1)
        # The cancelled read is `cancelled`; the deadline read is a timeout
        # even though grpc-js also cancels the call when its own deadline
        # timer fires (a cancel that comes with the deadline is the
        # deadline's).
        self.assertEqual(int(stats["cancelled"]), 1, stats)
        self.assertEqual(int(stats["timeouts"]), 1, stats)
        self.assertGreaterEqual(int(stats["hedges_skipped"]), 0)
        self.assertEqual(stats["in_flight"], "0")
        replicas = json.loads(stats["replicas"])
        self.assertEqual({r["url"]: r["circuit"] for r in replicas},
                         {self.fast.url: "CIRCUIT_STATE_CLOSED",
                          self.slow.url: "CIRCUIT_STATE_CLOSED"})


    def test_read_many_prints_each_item_as_it_arrives(self):
        items = {}
        for kind, fields in self.lines:
            if kind == "item" and fields["call"] == "read_many":
                self.assertNotIn(fields["index"], items, self.stdout)
                items[fields["index"]] = fields
        self.assertEqual(sorted(items), ["0", "1", "2", "3"], self.stdout)
        for index in ("0", "3"):
            self.assertEqual((items[index]["status"], items[index]["body"]),
                             ("200", "fast:/many/" + index))
            self.assert_trace(items[index])
        self.assertEqual((items["1"]["status"], items["1"]["body"]),
                         ("404", "no such thing\n"))
        # The unknown upstream fails its own item, not the call.
        self.assertEqual(items["2"]["code"], "NOT_FOUND")
        self.assertIn("nowhere", items["2"]["message"])
        batch = self.line("batch", "read_many")
        self.assertEqual((batch["code"], batch["items"]), ("OK", "4"))


class NodeClientUnixSocketTest(unittest.TestCase):

    def test_read_health_and_v1alpha_reflection_over_a_unix_socket(self):
        # A socket path is limited to 107 bytes; TEST_TMPDIR may be longer.
        directory = os.environ.get("TEST_TMPDIR", "")
        if not directory or len(directory) > 80:
            directory = tempfile.mkdtemp(prefix="tg-node-", dir="/tmp")
        socket = os.path.join(directory, "tailgate.sock")
        with Replica("fast") as fast, \
                Sidecar([fast.url], ["--listen=unix:" + socket]) as sidecar:
            self.assertEqual(sidecar.target, "unix:" + socket)
            code, lines, stdout, stderr = run_client(
                "unix:" + socket, sidecar.admin,
                "--calls=read,health,reflection", "--reflection=v1alpha")
        self.assertEqual(code, 0, stdout + stderr)
        self.assertEqual([k for k, _ in lines],
                         ["read", "health", "health", "reflection", "read"])
        for _, read in (lines[0], lines[4]):
            self.assertEqual((read["status"], read["replica"]),
                             ("200", fast.url))
        self.assertEqual(lines[0][1]["body"], "fast:/plain")
        self.assertEqual([f["status"] for _, f in lines[1:3]], ["SERVING"] * 2)
        # The library's v1alpha service, asked for explicitly: the client
        # built for v1's schema reaches it under its own name.
        self.assertEqual(lines[3][1]["version"], "v1alpha")
        self.assertEqual(lines[4][1]["body"], "fast:/reflected")


if __name__ == "__main__":
    unittest.main()
