#!/usr/bin/env bash
# expect_failure.sh REGEX COMMAND...: passes when COMMAND exits non-zero and
# its stderr is exactly one line matching the extended regular expression.
regex="$1"
shift
stderr_file="$(mktemp)"
trap 'rm -f "$stderr_file"' EXIT
"$@" >/dev/null 2>"$stderr_file"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "expected a failure, got exit 0"
  exit 1
fi
lines=$(wc -l <"$stderr_file")
if [ "$lines" -ne 1 ] || ! grep -Eq "$regex" "$stderr_file"; then
  echo "stderr did not match /$regex/ in one line:"
  cat "$stderr_file"
  exit 1
fi
exit 0
