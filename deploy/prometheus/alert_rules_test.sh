#!/usr/bin/env bash
# promtool (Debian's prometheus package, installed by tools/bootstrap) on
# the alert rules and their unit tests. Usage: RULES TESTS
set -euo pipefail
command -v promtool >/dev/null || {
  echo "promtool is not installed (tools/bootstrap installs prometheus)" >&2
  exit 1
}
promtool check rules "$1"
# promtool test rules reads rule_files relative to the test file.
promtool test rules "$2"
