"""End to end: the Go example client (tailgate_example.go) against the real
tailgate sidecar and loopback HTTP replicas.

The test generates the Go stubs from the shipped proto with protoc-gen-go and
protoc-gen-go-grpc, builds the example offline in GOPATH mode against
Debian's Go sources (/usr/share/gocode: grpc-go 1.33, protobuf-go 1.28), with
GOPATH and GOCACHE under TEST_TMPDIR, runs it once, and checks every line it
prints.

Replicas (client/testing/sidecar_harness.py lists the paths they serve):
  fast   answers at once
  slow   answers after SLOW_DELAY, so a read whose primary is `slow` is
         hedged to `fast` after HEDGE_DELAY and the hedge wins
A second sidecar, in front of `fast` only, listens on a Unix socket.
"""

import ast
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from client.testing import sidecar_harness
from client.testing.sidecar_harness import Replica, Sidecar

SLOW_DELAY = 0.5
HEDGE_DELAY_MS = 20
MAX_RESPONSE_BYTES = 1024
HEDGE_READS = 4
DEADLINE_MS = 200  # the example's deadline for its /stall read
STALL_MS = sidecar_harness.STALL * 1000

PROTO = "proto/tailgate/v1/tailgate.proto"  # runfiles paths
EXAMPLE = "client/go/tailgate_example.go"
GOCODE = "/usr/share/gocode"
# github.com/golang/protobuf 1.4 and later (Debian's
# golang-github-golang-protobuf-1-5-dev) marshal through
# google.golang.org/protobuf; grpc-go 1.33's codec needs that for messages
# from protoc-gen-go 1.28. 1.3 (the -1-3-dev package) has no registry.go
# and panics on them at the first call.
GOLANG_PROTOBUF_1_4 = GOCODE + "/src/github.com/golang/protobuf/proto/registry.go"

# The example's output lines: a kind, then key=value fields whose values are
# bare or Go-quoted.
_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')

# Every line, in order: (kind, call or listener).
EXPECTED_LINES = (
    [("read", "plain")] + [("read", "hedged")] * HEDGE_READS + [
        ("read", "head"),
        ("read", "http-404"),
        ("read", "http-503"),
        ("error", "invalid-argument"),
        ("error", "not-found"),
        ("error", "resource-exhausted"),
        ("cancel", None),
        ("error", "deadline-exceeded"),
        ("stats", None),
        ("health", "read"),
        ("health", "admin"),
        ("reflection", None),
    ] + [("item", "many")] * 4 + [
        ("batch", "many"),
        ("read", "unix"),
    ])


def parse_line(line):
    """'read call=x body="a b"' -> ("read", {"call": "x", "body": "a b"})."""
    kind, _, rest = line.partition(" ")
    fields = {}
    for key, value in _FIELD.findall(rest):
        fields[key] = ast.literal_eval(value) if value.startswith('"') else value
    return kind, fields


def tool(name):
    found = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/bin")
    if not found:
        raise AssertionError("%s not found (tools/bootstrap installs it)" % name)
    return found


def build_example(workdir):
    """Generates the stubs into a GOPATH and builds the example: its path and
    the build's wall time in seconds."""
    if not os.path.exists(GOLANG_PROTOBUF_1_4):
        raise AssertionError(
            "github.com/golang/protobuf in %s is older than 1.4; run "
            "tools/bootstrap (golang-github-golang-protobuf-1-5-dev)" % GOCODE)
    gopath = os.path.join(workdir, "gopath")
    src = os.path.join(gopath, "src")
    os.makedirs(src)
    # go_package puts the stubs at tailgate/gen/go/tailgate/v1 under src.
    subprocess.run(
        [tool("protoc"), "-I.",
         "--plugin=protoc-gen-go=" + tool("protoc-gen-go"),
         "--plugin=protoc-gen-go-grpc=" + tool("protoc-gen-go-grpc"),
         "--go_out=" + src, "--go-grpc_out=" + src, PROTO],
        check=True)
    binary = os.path.join(workdir, "tailgate_example")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": workdir,
        "GO111MODULE": "off",
        "GOPATH": gopath + ":" + GOCODE,
        "GOCACHE": os.path.join(workdir, "gocache"),
        "GOENV": "off",
        "GOFLAGS": "",
        "GOPROXY": "off",
    }
    start = time.monotonic()
    subprocess.run([tool("go"), "build", "-o", binary, EXAMPLE], env=env,
                   check=True, timeout=600)
    return binary, time.monotonic() - start


class GoClientEndToEndTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        workdir = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
        binary, cls.build_seconds = build_example(workdir)
        print("go build: %.1fs" % cls.build_seconds)
        cls.fast = Replica("fast", delay=0)
        cls.slow = Replica("slow", delay=SLOW_DELAY)
        flags = ["--hedge_delay=%dms" % HEDGE_DELAY_MS,
                 "--max_response_bytes=%d" % MAX_RESPONSE_BYTES,
                 # Enough hedge budget for every read here, and circuits
                 # that stay closed through the deliberate failures.
                 "--hedge_burst=50", "--hedge_fraction=1",
                 "--failure_threshold=1000", "--timeout=10s",
                 "--drain_timeout=1s"]
        # A socket path must fit in 108 bytes; TEST_TMPDIR may not.
        cls.socket_dir = tempfile.mkdtemp(prefix="tailgate_go_", dir="/tmp")
        cls.sidecar = Sidecar([cls.fast.url, cls.slow.url], flags)
        # The later --listen wins over the harness's loopback one.
        cls.unix_sidecar = Sidecar(
            [cls.fast.url],
            flags + ["--listen=unix:" + os.path.join(cls.socket_dir, "s")])
        start = time.monotonic()
        result = subprocess.run(
            [binary, "-target=" + cls.sidecar.target,
             "-admin=" + cls.sidecar.admin,
             "-unix_target=" + cls.unix_sidecar.target,
             "-hedge_reads=%d" % HEDGE_READS,
             "-hedge_delay=%dms" % HEDGE_DELAY_MS],
            capture_output=True, text=True, timeout=60)
        cls.run_seconds = time.monotonic() - start
        print("go client stdout (%.1fs):\n%s" % (cls.run_seconds, result.stdout))
        cls.exit_code, cls.stderr = result.returncode, result.stderr
        cls.lines = [parse_line(l) for l in result.stdout.splitlines()]

    @classmethod
    def tearDownClass(cls):
        codes = [cls.sidecar.close(), cls.unix_sidecar.close()]
        cls.fast.close()
        cls.slow.close()
        shutil.rmtree(cls.socket_dir, ignore_errors=True)
        if codes != [0, 0]:
            raise AssertionError("sidecars exited %s:\n%s" % (
                codes, "".join(cls.sidecar.log + cls.unix_sidecar.log)))

    def line(self, kind, name=None):
        """The fields of the one line of `kind` whose call or listener is
        `name`."""
        found = [f for k, f in self.lines if k == kind and
                 (name is None or name in (f.get("call"), f.get("listener")))]
        self.assertEqual(len(found), 1, (kind, name, self.lines))
        return found[0]

    def reads(self, name):
        return [f for k, f in self.lines if k == "read" and f["call"] == name]

    def test_prints_one_line_per_call_and_exits_0(self):
        self.assertEqual((self.exit_code, self.stderr), (0, ""))
        self.assertEqual(
            [(k, f.get("call", f.get("listener"))) for k, f in self.lines],
            EXPECTED_LINES)

    def test_plain_read(self):
        read = self.line("read", "plain")
        self.assertEqual((read["status"], read["body"]), ("200", "fast:/hello"))
        self.assertEqual(read["replica"], self.fast.url)
        self.assertIn(read["attempts"], ("1", "2"))

    def test_slow_primary_is_hedged_and_the_hedge_wins(self):
        reads = self.reads("hedged")
        self.assertEqual(len(reads), HEDGE_READS)
        for read in reads:
            self.assertEqual((read["status"], read["body"], read["replica"]),
                             ("200", "fast:/hedge-me", self.fast.url), read)
            self.assertLess(float(read["latency_ms"]), SLOW_DELAY * 1000)
            self.assertEqual(read["attempts"],
                             "2" if read["hedged"] == "true" else "1", read)
        # Consecutive reads rotate the primary: the ones on `slow` are
        # hedged to `fast` after HEDGE_DELAY, and the hedge answers.
        won = [r for r in reads if r["hedge_won"] == "true"]
        self.assertTrue(won, reads)
        for read in won:
            self.assertEqual(read["hedged"], "true", read)
            self.assertGreaterEqual(float(read["latency_ms"]), HEDGE_DELAY_MS)

    def test_head_has_no_body(self):
        read = self.line("read", "head")
        self.assertEqual((read["status"], read["body"]), ("200", ""))

    def test_http_errors_are_ok_with_their_status(self):
        missing = self.line("read", "http-404")
        self.assertEqual((missing["status"], missing["body"]),
                         ("404", "no such thing\n"))
        # Both replicas answer 503: the fallback attempt is no win.
        unavailable = self.line("read", "http-503")
        self.assertEqual(unavailable["status"], "503")
        self.assertRegex(unavailable["body"], r"^(fast|slow):/status/503$")
        self.assertEqual((unavailable["attempts"], unavailable["hedge_won"]),
                         ("2", "false"))

    def test_descriptor_errors(self):
        invalid = self.line("error", "invalid-argument")
        self.assertEqual(invalid["code"], "INVALID_ARGUMENT")
        self.assertIn("Host", invalid["message"])
        missing = self.line("error", "not-found")
        self.assertEqual(missing["code"], "NOT_FOUND")
        self.assertIn("nowhere", missing["message"])

    def test_oversized_body_is_resource_exhausted(self):
        error = self.line("error", "resource-exhausted")
        self.assertEqual(error["code"], "RESOURCE_EXHAUSTED")
        self.assertIn(str(MAX_RESPONSE_BYTES), error["message"])

    def test_deadline_is_deadline_exceeded(self):
        error = self.line("error", "deadline-exceeded")
        self.assertEqual(error["code"], "DEADLINE_EXCEEDED")
        # The sidecar's copy of the deadline is mapped onto its own clocks:
        # its answer may come a fraction of a millisecond before the
        # client's own deadline would have fired.
        self.assertGreaterEqual(float(error["elapsed_ms"]), DEADLINE_MS - 5)
        self.assertLess(float(error["elapsed_ms"]), STALL_MS)

    def test_cancel_is_cancelled_and_counted(self):
        cancel = self.line("cancel")
        self.assertEqual((cancel["code"], cancel["admitted"]),
                         ("CANCELLED", "true"))
        self.assertLess(float(cancel["elapsed_ms"]), STALL_MS)
        self.assertGreater(int(cancel["cancelled_after"]),
                           int(cancel["cancelled_before"]))

    def test_admin_stats(self):
        stats = self.line("stats")
        tcp_reads = [f for k, f in self.lines
                     if k == "read" and f["call"] != "unix"]
        # Admitted: every OK read, and the /big, cancelled and deadline
        # reads; the descriptor errors are refused before admission.
        self.assertEqual(int(stats["requests"]), len(tcp_reads) + 3)
        self.assertEqual(int(stats["hedge_wins"]),
                         sum(r["hedge_won"] == "true" for r in tcp_reads))
        self.assertGreaterEqual(int(stats["hedges"]),
                                sum(r["hedged"] == "true" for r in tcp_reads))
        self.assertGreaterEqual(int(stats["cancelled"]),
                                int(self.line("cancel")["cancelled_after"]))
        self.assertGreaterEqual(int(stats["hedges_skipped"]), 0)
        self.assertEqual(
            sorted(stats["replicas"].split(",")),
            sorted([self.fast.url + "=closed", self.slow.url + "=closed"]))

    def test_health_on_both_listeners(self):
        read = self.line("health", "read")
        self.assertEqual((read["service"], read["status"]), ("", "SERVING"))
        admin = self.line("health", "admin")
        self.assertEqual((admin["service"], admin["status"]),
                         ("tailgate.v1.Admin", "SERVING"))

    def test_reflection_lists_the_services(self):
        reflection = self.line("reflection")
        self.assertIn(reflection["api"], ("v1", "v1alpha"))
        services = reflection["services"].split(",")
        self.assertIn("tailgate.v1.HedgedRead", services)
        self.assertIn("grpc.health.v1.Health", services)
        self.assertIn("grpc.reflection.%s.ServerReflection" % reflection["api"],
                      services)

    def test_read_many_prints_each_item_as_it_arrives(self):
        items = {}
        for kind, fields in self.lines:
            if kind == "item":
                self.assertNotIn(fields["index"], items, self.lines)
                items[fields["index"]] = fields
        self.assertEqual(sorted(items), ["0", "1", "2", "3"])
        for index in ("0", "3"):
            read = items[index]
            self.assertEqual((read["status"], read["body"], read["replica"]),
                             ("200", "fast:/many/" + index, self.fast.url))
            self.assertEqual(read["attempts"],
                             "2" if read["hedged"] == "true" else "1", read)
        self.assertEqual((items["1"]["status"], items["1"]["body"]),
                         ("404", "no such thing\n"))
        # The unknown upstream fails its own item, not the call.
        self.assertEqual(items["2"]["code"], "NOT_FOUND")
        self.assertIn("nowhere", items["2"]["message"])
        batch = self.line("batch", "many")
        self.assertEqual((batch["code"], batch["items"]), ("OK", "4"))

    def test_read_over_unix_socket(self):
        self.assertTrue(self.unix_sidecar.target.startswith("unix:/"))
        read = self.line("read", "unix")
        self.assertEqual((read["status"], read["body"], read["replica"]),
                         ("200", "fast:/over-unix", self.fast.url))


if __name__ == "__main__":
    unittest.main()
