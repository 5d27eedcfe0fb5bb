"""client/node's package.json and package-lock.json against tools/npm's.

`npm ci` in client/node must install what the tests ran the example with:
every package of client/node's lock is in tools/npm's at the same version,
and package.json asks for exactly the locked versions of its direct
dependencies.
"""

import json
import unittest

CLIENT = "client/node"
TOOLS_LOCK = "tools/npm/package-lock.json"


def load(path):
    with open(path) as f:
        return json.load(f)


class PackageLockTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.package = load(CLIENT + "/package.json")
        cls.lock = load(CLIENT + "/package-lock.json")["packages"]
        cls.tools = load(TOOLS_LOCK)["packages"]

    def test_the_example_needs_grpc_js_and_proto_loader(self):
        self.assertEqual(set(self.package["dependencies"]),
                         {"@grpc/grpc-js", "@grpc/proto-loader"})
        self.assertEqual(self.lock[""]["dependencies"],
                         self.package["dependencies"])

    def test_direct_dependencies_are_pinned_to_the_locked_versions(self):
        for name, wanted in self.package["dependencies"].items():
            with self.subTest(package=name):
                self.assertEqual(wanted,
                                 self.lock["node_modules/" + name]["version"])

    def test_every_locked_package_is_the_one_the_tests_use(self):
        packages = [p for p in self.lock if p]
        self.assertGreater(len(packages), 2)
        for path in packages:
            with self.subTest(package=path):
                self.assertIn(path, self.tools)
                for field in ("version", "integrity"):
                    self.assertEqual(self.lock[path][field],
                                     self.tools[path][field], field)


if __name__ == "__main__":
    unittest.main()
