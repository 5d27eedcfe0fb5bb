"""A signal that stops //experiment stops the programs it started.

Runs the real binary in the seed scenario, waits until it has started a
sidecar, signals it, and checks that it ended by that signal and that
none of its children outlived it.
"""

import os
import signal
import subprocess
import time
import unittest

EXPERIMENT = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                          "experiment")
WAIT_S = 60


def children_of(pid):
    """Pids whose parent is `pid`, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class ExperimentSignalTest(unittest.TestCase):

    def stop_with(self, signum):
        experiment = subprocess.Popen(
            [EXPERIMENT, "--requests=100000"], stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + WAIT_S
            children = []
            while not children and time.monotonic() < deadline:
                self.assertIsNone(experiment.poll(), experiment.stderr)
                children = children_of(experiment.pid)
                time.sleep(0.05)
            self.assertTrue(children, "the experiment started no program")

            experiment.send_signal(signum)
            _, stderr = experiment.communicate(timeout=WAIT_S)
            self.assertEqual(experiment.returncode, -signum, stderr)
            self.assertIn("stopping the programs it ran", stderr)
            for child in children:
                self.assertFalse(alive(child), f"child {child} outlived it")
        finally:
            if experiment.poll() is None:
                experiment.kill()
                experiment.wait()

    def test_sigterm(self):
        self.stop_with(signal.SIGTERM)

    def test_sigint(self):
        self.stop_with(signal.SIGINT)


if __name__ == "__main__":
    unittest.main()
