"""A signal that stops //experiment stops the programs it started.

Runs the real binary in the seed scenario in a process group of its own,
waits until it has started a sidecar, signals it (or, as a terminal's
Ctrl-C does, its whole group), and checks that it ended by that signal
and that nothing it started outlived it.
"""

import os
import signal
import subprocess
import time
import unittest

EXPERIMENT = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                          "experiment")
WAIT_S = 60


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command name, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def children_of(pid):
    """Pids whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields and int(fields[1]) == pid:
                found.append(int(entry))
    return found


def live_in_group(pgid):
    """Pids of the group `pgid` that are not zombies."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields and int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


class ExperimentSignalTest(unittest.TestCase):

    def stop_with(self, signum, whole_group):
        experiment = subprocess.Popen(
            [EXPERIMENT, "--requests=100000"], stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        pgid = experiment.pid
        try:
            deadline = time.monotonic() + WAIT_S
            while not children_of(experiment.pid):
                self.assertIsNone(experiment.poll(), "the experiment ended")
                self.assertLess(time.monotonic(), deadline,
                                "the experiment started no program")
                time.sleep(0.05)

            if whole_group:
                os.killpg(pgid, signum)
            else:
                experiment.send_signal(signum)
            _, stderr = experiment.communicate(timeout=WAIT_S)
            self.assertEqual(experiment.returncode, -signum, stderr)
            self.assertIn("stopping the programs it ran", stderr)
            self.assertEqual(live_in_group(pgid), [],
                             "programs it started outlived it")
        finally:
            if experiment.poll() is None:
                os.killpg(pgid, signal.SIGKILL)
                experiment.wait()

    def test_sigterm(self):
        self.stop_with(signal.SIGTERM, whole_group=False)

    def test_sigint(self):
        self.stop_with(signal.SIGINT, whole_group=False)

    def test_ctrl_c_to_the_whole_group(self):
        self.stop_with(signal.SIGINT, whole_group=True)


if __name__ == "__main__":
    unittest.main()
