"""Test of //experiment:wake_latency: its output's shape and its flag.

Asserts no latency figure (the host's are what it measures), only that
every placement and idle time gets a line with the asked-for number of
samples, that percentiles are ordered, and that a bad --samples is one
clear line with exit code 2.
"""

import json
import os
import subprocess
import unittest

PROBE = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                     "wake_latency")
IDLE_MS = [0.05, 0.5, 2.0, 5.0, 7.0, 40.0]


def run(*flags):
    return subprocess.run([PROBE, *flags], capture_output=True, text=True,
                          timeout=120, check=False)


class WakeLatencyTest(unittest.TestCase):

    def test_one_line_per_placement_and_idle_time(self):
        result = run("--samples=10")  # the smallest allowed
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        placements = ["any", "same_cpu"]
        if len(os.sched_getaffinity(0)) >= 2:
            placements.append("other_cpu")
        self.assertEqual([(line["placement"], line["idle_ms"])
                          for line in lines],
                         [(p, idle) for p in placements for idle in IDLE_MS])
        for line in lines:
            for measure in ["wake_", "timer_late_"]:
                self.assertEqual(line[measure + "samples"], 10)
                self.assertLessEqual(line[measure + "p50_ms"],
                                     line[measure + "p99_ms"])
                self.assertLessEqual(line[measure + "p99_ms"],
                                     line[measure + "max_ms"])
            # A timerfd never expires early.
            self.assertGreaterEqual(line["timer_late_p50_ms"], 0)

    def test_bad_samples_are_one_line_and_exit_2(self):
        for value in ["9", "100001", "many"]:
            with self.subTest(samples=value):
                result = run("--samples=" + value)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(result.stdout, "")
                lines = result.stderr.splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn("--samples:", lines[0])
                self.assertIn('"%s"' % value, lines[0])


if __name__ == "__main__":
    unittest.main()
