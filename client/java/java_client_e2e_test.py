"""End to end: the Java example client (TailgateExample.java) against the
real tailgate sidecar and loopback HTTP replicas.

The test generates the Java stubs from the shipped proto with protoc and
grpc_java_plugin, compiles them and the example with javac into
$TEST_TMPDIR, runs the example once against the sidecar, and asserts on
each line it prints (one per call; TailgateExample.java lists the formats).
The JDK, protoc, the plugin and the jars are Debian's (tools/bootstrap).

Replicas (client/testing/sidecar_harness.py lists the paths they serve):
  fast   answers at once
  slow   answers after SLOW_DELAY, so a read whose primary is `slow` is
         hedged to `fast` after the example's per-read hedge delay
"""

import os
import re
import subprocess
import time
import unittest

from client.testing import sidecar_harness
from client.testing.sidecar_harness import Replica, Sidecar

SLOW_DELAY = 0.5
# TailgateExample's per-read hedge delay (HedgeOptions.delay) and its
# deadline for /stall.
HEDGE_DELAY_MS = 20
SHORT_DEADLINE_MS = 200
STALL_MS = sidecar_harness.STALL * 1000

PROTO = "proto/tailgate/v1/tailgate.proto"
EXAMPLE = "client/java/TailgateExample.java"
MAIN_CLASS = "tailgate.example.TailgateExample"
PROTOC = "/usr/bin/protoc"
GRPC_JAVA_PLUGIN = "/usr/bin/grpc_java_plugin"
JAVA_DIR = "/usr/share/java"

# The runtime classpath, jar -> Debian package. grpc-core and grpc-netty
# need perfmark-api; grpc-protobuf needs grpc-protobuf-lite.
RUNTIME_JARS = {
    "grpc-api.jar": "libgrpc-java",
    "grpc-context.jar": "libgrpc-java",
    "grpc-core.jar": "libgrpc-java",
    "grpc-netty.jar": "libgrpc-java",
    "grpc-protobuf.jar": "libgrpc-java",
    "grpc-protobuf-lite.jar": "libgrpc-java",
    "grpc-stub.jar": "libgrpc-java",
    "protobuf.jar": "libprotobuf-java",
    "guava.jar": "libguava-java",
    "perfmark-api.jar": "libperfmark-java",
    "netty-buffer.jar": "libnetty-java",
    "netty-codec.jar": "libnetty-java",
    "netty-codec-http.jar": "libnetty-java",
    "netty-codec-http2.jar": "libnetty-java",
    "netty-common.jar": "libnetty-java",
    "netty-handler.jar": "libnetty-java",
    "netty-resolver.jar": "libnetty-java",
    "netty-transport.jar": "libnetty-java",
}
# Compile time only. grpc_java_plugin 1.41 annotates the stubs with
# javax.annotation.Generated (source retention), which Java 11 and later
# no longer ship; error_prone_annotations quiets javac's warnings about
# annotations on the grpc and guava classes.
COMPILE_JARS = {
    "geronimo-annotation-1.3-spec.jar": "libgeronimo-annotation-1.3-spec-java",
    "error_prone_annotations.jar": "liberror-prone-java",
}
# C1 only and the serial collector: javac and the example start about three
# times faster on a small machine.
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData"]

_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def classpath(jars):
    missing = ["%s (Debian package %s)" % (jar, package)
               for jar, package in jars.items()
               if not os.path.exists(os.path.join(JAVA_DIR, jar))]
    if missing:
        raise AssertionError("missing, see tools/bootstrap: " +
                             ", ".join(missing))
    return [os.path.join(JAVA_DIR, jar) for jar in jars]


def unquote(value):
    if value.startswith('"'):
        return re.sub(r'\\(x[0-9a-f]{2}|.)',
                      lambda m: (chr(int(m.group(1)[1:], 16))
                                 if len(m.group(1)) == 3 else m.group(1)),
                      value[1:-1])
    return value


def parse_line(line):
    """'read call=x status=200 ...' -> {'kind': 'read', 'call': 'x', ...}."""
    kind, _, rest = line.partition(" ")
    fields = {key: unquote(value) for key, value in _FIELD.findall(rest)}
    fields["kind"] = kind
    return fields


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                            **kwargs)
    if result.returncode != 0:
        raise AssertionError("%s exited %d:\n%s%s" % (
            argv[0], result.returncode, result.stdout, result.stderr))
    return result


def build_example(tmp):
    """Generates the stubs, compiles them and the example: the classpath."""
    generated = os.path.join(tmp, "generated")
    classes = os.path.join(tmp, "classes")
    os.makedirs(generated)
    os.makedirs(classes)
    run([PROTOC, "-I.", "--java_out=" + generated,
         "--plugin=protoc-gen-grpc-java=" + GRPC_JAVA_PLUGIN,
         "--grpc-java_out=" + generated, PROTO])
    sources = [os.path.join(root, name)
               for root, _, names in os.walk(generated)
               for name in names if name.endswith(".java")]
    runtime = classpath(RUNTIME_JARS)
    run(["javac"] + ["-J" + flag for flag in JVM_FLAGS] +
        ["-proc:none", "-Xlint:all", "-encoding", "UTF-8", "-d", classes,
         "-cp", os.pathsep.join(runtime + classpath(COMPILE_JARS))] +
        sources + [EXAMPLE])
    return os.pathsep.join([classes] + runtime)


class JavaClientEndToEndTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        tmp = os.environ.get("TEST_TMPDIR") or os.environ["TMPDIR"]
        # javac and java read JAVA_TOOL_OPTIONS and _JAVA_OPTIONS; the
        # results must not depend on the caller's.
        cls.env = {key: value for key, value in os.environ.items()
                   if key not in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
                                  "JDK_JAVA_OPTIONS", "CLASSPATH")}
        cls.env["HOME"] = tmp
        start = time.monotonic()
        cls.classpath = build_example(tmp)
        cls.build_seconds = time.monotonic() - start

        cls.fast = Replica("fast", delay=0)
        cls.slow = Replica("slow", delay=SLOW_DELAY)
        cls.sidecar = Sidecar(
            [cls.fast.url, cls.slow.url],
            ["--hedge_delay=%dms" % HEDGE_DELAY_MS,
             # Enough hedge budget for every read here, and circuits that
             # stay closed through the 503s.
             "--hedge_burst=50", "--hedge_fraction=1",
             "--failure_threshold=1000", "--timeout=10s",
             "--drain_timeout=1s"])
        start = time.monotonic()
        cls.result = cls.run_example("--target=" + cls.sidecar.target,
                                     "--admin=" + cls.sidecar.admin)
        cls.run_seconds = time.monotonic() - start
        print("javac %.1fs, example %.1fs; stdout:\n%s" %
              (cls.build_seconds, cls.run_seconds, cls.result.stdout))
        cls.lines = [parse_line(line)
                     for line in cls.result.stdout.splitlines()]

    @classmethod
    def tearDownClass(cls):
        try:
            cls.sidecar.close_expecting_success()
        finally:
            cls.fast.close()
            cls.slow.close()

    @classmethod
    def run_example(cls, *argv):
        return subprocess.run(
            ["java"] + JVM_FLAGS + ["-Djava.io.tmpdir=" + cls.env["HOME"],
                                    "-cp", cls.classpath, MAIN_CLASS] +
            list(argv),
            capture_output=True, text=True, timeout=60, env=cls.env)

    def calls(self, name):
        return [line for line in self.lines if line.get("call") == name]

    def assert_read_from_fast(self, line, body):
        """An OK read answered by `fast`, with a consistent trace."""
        self.assertEqual(line["kind"], "read", line)
        self.assertEqual(line["status"], "200", line)
        self.assertEqual(line["body"], body, line)
        self.assertEqual(line["replica"], self.fast.url, line)
        self.assertEqual(line["attempts"],
                         "2" if line["hedged"] == "true" else "1", line)
        self.assertLess(int(line["latency_ms"]), SLOW_DELAY * 1000, line)

    def test_the_example_ran_every_call_and_shut_down_cleanly(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        # No exception on a gRPC or netty thread either (they are logged).
        self.assertNotIn("Exception", self.result.stderr)
        self.assertNotIn("SEVERE", self.result.stderr)
        names = [line.get("call", line["kind"]) for line in self.lines]
        hedged = names.count("hedged")
        self.assertEqual(names, ["plain"] + ["hedged"] * hedged + [
            "head", "status-503", "missing-upstream", "deadline", "cancel",
            "stats"] + ["many"] * 5)

    def test_plain_read(self):
        (line,) = self.calls("plain")
        # Whichever replica is primary, `fast` answers first.
        self.assert_read_from_fast(line, "fast:/hello")
        self.assertEqual(line["hedge_won"], "false", line)

    def test_slow_primary_is_hedged_and_the_hedge_wins(self):
        lines = self.calls("hedged")
        # The sidecar rotates the primary over the two replicas for every
        # read, so the first or the second read starts on `slow`: it is
        # hedged to `fast` after HEDGE_DELAY_MS, and the hedge answers.
        self.assertIn(len(lines), (1, 2), lines)
        for line in lines:
            self.assert_read_from_fast(line, "fast:/hedge-me")
        for line in lines[:-1]:
            self.assertEqual(line["hedge_won"], "false", line)
        won = lines[-1]
        self.assertEqual((won["hedged"], won["hedge_won"], won["attempts"]),
                         ("true", "true", "2"), won)
        self.assertGreaterEqual(int(won["latency_ms"]), HEDGE_DELAY_MS, won)

    def test_head_has_no_body(self):
        (line,) = self.calls("head")
        self.assert_read_from_fast(line, "")

    def test_503_from_every_replica_is_ok_with_status_503(self):
        (line,) = self.calls("status-503")
        self.assertEqual(line["kind"], "read", line)
        self.assertEqual(line["status"], "503", line)
        self.assertRegex(line["body"], r"^(fast|slow):/status/503$")
        self.assertIn(line["replica"], (self.fast.url, self.slow.url), line)
        # The first 503 makes the sidecar try the other replica, which
        # answers 503 too: a second attempt, and no hedge win.
        self.assertEqual((line["attempts"], line["hedged"], line["hedge_won"]),
                         ("2", "true", "false"), line)

    def test_unknown_upstream_is_not_found(self):
        (line,) = self.calls("missing-upstream")
        self.assertEqual((line["kind"], line["code"]), ("error", "NOT_FOUND"),
                         line)
        self.assertIn('"nowhere"', line["message"])

    def test_deadline_is_deadline_exceeded(self):
        (line,) = self.calls("deadline")
        self.assertEqual((line["kind"], line["code"]),
                         ("error", "DEADLINE_EXCEEDED"), line)
        # The sidecar may answer a hair before the client's own timer.
        self.assertGreaterEqual(int(line["elapsed_ms"]), SHORT_DEADLINE_MS - 5)
        self.assertLess(int(line["elapsed_ms"]), STALL_MS)

    def test_cancelled_context_is_cancelled(self):
        (line,) = self.calls("cancel")
        self.assertEqual((line["kind"], line["code"]), ("error", "CANCELLED"),
                         line)
        self.assertLess(int(line["elapsed_ms"]), STALL_MS)

    def test_read_many_prints_each_item_as_it_arrives(self):
        lines = self.calls("many")
        self.assertEqual([line["kind"] for line in lines],
                         ["item"] * 4 + ["batch"], lines)
        items = {line["index"]: line for line in lines[:4]}
        self.assertEqual(sorted(items), ["0", "1", "2", "3"], lines)
        for index in ("0", "3"):
            line = dict(items[index], kind="read")
            self.assert_read_from_fast(line, "fast:/many/" + index)
        self.assertEqual((items["1"]["status"], items["1"]["body"]),
                         ("404", "no such thing\n"))
        # The unknown upstream fails its own item, not the call.
        self.assertEqual(items["2"]["code"], "NOT_FOUND")
        self.assertIn('"nowhere"', items["2"]["message"])
        self.assertEqual((lines[4]["code"], lines[4]["items"]), ("OK", "4"))

    def test_admin_stats_count_the_calls(self):
        # Printed before the ReadMany call: its reads are not counted.
        (stats,) = [line for line in self.lines if line["kind"] == "stats"]
        reads = [line for line in self.lines if line["kind"] == "read"]
        # Admitted: every OK read, the deadline and the cancelled read (an
        # unknown upstream is refused before admission).
        self.assertEqual(int(stats["requests"]), len(reads) + 2, stats)
        self.assertEqual(int(stats["hedge_wins"]),
                         sum(line["hedge_won"] == "true" for line in reads),
                         stats)
        # The two reads of /stall may have been hedged too.
        hedged = sum(line["hedged"] == "true" for line in reads)
        self.assertGreaterEqual(int(stats["hedges"]), hedged, stats)
        self.assertLessEqual(int(stats["hedges"]), hedged + 2, stats)
        self.assertEqual(stats["hedges_skipped"], "0", stats)
        # The example waited for in_flight=0: both failed reads are counted,
        # the deadline one as a timeout even when the client's RST_STREAM
        # reaches the sidecar first (a cancel that comes with the deadline
        # is the deadline's).
        self.assertEqual(stats["in_flight"], "0", stats)
        self.assertEqual(int(stats["cancelled"]), 1, stats)
        self.assertEqual(int(stats["timeouts"]), 1, stats)
        replicas = dict(entry.rsplit("=", 1)
                        for entry in stats["replicas"].split(","))
        self.assertEqual(replicas, {self.fast.url: "closed",
                                    self.slow.url: "closed"})

    def test_usage_error_exits_2(self):
        result = self.run_example("--target=127.0.0.1:1")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertIn("--admin", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
