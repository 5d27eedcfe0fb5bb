#!/usr/bin/env bash
# Runs the real binary with bad flags: each must exit 2 after printing one
# line that names the flag, before binding anything. Then --help and
# --version, which exit 0.
set -u
tailgate="$1"
version_file="$2"
failures=0

# expect_line EXPECTED_LINE ARGS...
expect_line() {
  local want="$1"
  shift
  local err rc
  err=$("$tailgate" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: tailgate $*: exit $rc, want 2 (stderr: $err)"
    failures=$((failures + 1))
  elif [ "$err" != "$want" ]; then
    echo "FAIL: tailgate $*: stderr"
    echo "  got:  $err"
    echo "  want: $want"
    failures=$((failures + 1))
  fi
}

ok=--backends=http://127.0.0.1:1
expect_line "--backends: required: a comma-separated list of replica URLs"
expect_line "--max_response_bytes: must be in [1, 67108864] (64 MiB), got 67108865" \
  "$ok" --max_response_bytes=67108865
expect_line '--hedge_delay: must be less than timeout (100ms), got 100ms' \
  "$ok" --timeout=100ms --hedge_delay=100ms
expect_line '--listen: port must be in [0, 65535], got "99999"' \
  "$ok" --listen=127.0.0.1:99999
expect_line '--log_format: want logfmt or json, got "xml"' "$ok" --log_format=xml
expect_line '--sched_policy: must be batch or normal, got "idle"' "$ok" --sched_policy=idle
expect_line "--hedge_fraction: must be in [0, 1], got 1.5" "$ok" --hedge_fraction=1.5
expect_line "--ejection_failure_rate: must be in (0, 1], got 0" \
  "$ok" --ejection_failure_rate=0
expect_line "--give_up_max: must be in [give_up_min (20ms), 1h], got 10ms" \
  "$ok" --give_up_max=10ms
expect_line '--probe_method: want GET or HEAD, got "POST"' "$ok" --probe_method=POST
expect_line 'unexpected argument "extra" (every setting is a --flag)' "$ok" extra

# h2c is checked against this libcurl before anything starts: one line too.
if [[ "$(curl-config --vernum)" < "080000" ]]; then
  err=$("$tailgate" "$ok" --backend_http2 2>&1 >/dev/null)
  rc=$?
  case "$rc:$err" in
    "2:--backend_http2: HTTP/2 to an http:// replica (h2c) needs libcurl 8.0.0"*) ;;
    *) echo "FAIL: tailgate --backend_http2 to http://: exit $rc, stderr: $err"
       failures=$((failures + 1)) ;;
  esac
fi

# --help prints the help generated from the settings schema on stdout,
# every flag with its default, and exits 0.
help=$("$tailgate" --help 2>/dev/null)
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: tailgate --help: exit $rc, want 0"
  failures=$((failures + 1))
fi
for flag in --config --backends --hedge_delay --timer_spin --sched_policy \
    --ejection_failure_rate --give_up_factor --probe_path --tenant_share; do
  if ! grep -q -e "^  $flag (" <<<"$help"; then
    echo "FAIL: tailgate --help does not list $flag"
    failures=$((failures + 1))
  fi
done
for line in 'Hedged HTTP reads as a gRPC sidecar.' \
    '  --hedge_delay (default: "25ms"; file: upstreams.hedge_delay; reload: applies)' \
    '  --listen (default: "127.0.0.1:8080"; file: listen; reload: restart)'; do
  if ! grep -q -x -F -e "$line" <<<"$help"; then
    echo "FAIL: tailgate --help lacks the line: $line"
    failures=$((failures + 1))
  fi
done
# -help is the same; after "--" it is not a flag.
if ! "$tailgate" -help >/dev/null 2>&1; then
  echo "FAIL: tailgate -help does not exit 0"
  failures=$((failures + 1))
fi

# --version: the VERSION file's version and the commit (a hash, or
# "unknown" in a build without --stamp), on stdout, exit 0, before any
# other flag is checked (no --backends needed).
want_version=$(tr -d ' \t\r\n' <"$version_file")
out=$("$tailgate" --version 2>/dev/null)
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: tailgate --version: exit $rc, want 0"
  failures=$((failures + 1))
fi
if ! grep -q -x -E -e "tailgate ${want_version//./\\.} \(commit ([0-9a-f]{40}(-dirty)?|unknown)\)" \
    <<<"$out"; then
  echo "FAIL: tailgate --version printed: $out"
  echo "  want: tailgate $want_version (commit HASH or unknown)"
  failures=$((failures + 1))
fi
if grep -q NDEBUG <<<"$out"; then
  echo "FAIL: tailgate --version prints abseil's build mode: $out"
  failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "PASS"
exit "$failures"
