#!/usr/bin/env bash
# yamllint, strict (a warning fails), default rules, on the files given.
# tools/bootstrap installs yamllint; a missing one fails the test.
set -euo pipefail
command -v yamllint >/dev/null || {
  echo "yamllint is not installed (tools/bootstrap installs it)" >&2
  exit 1
}
# -d default: ignore any .yamllint of the caller's directories.
yamllint --strict -d default "$@"
echo "yamllint: $# files clean"
