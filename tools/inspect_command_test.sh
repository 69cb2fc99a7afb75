#!/bin/sh
# `brigade inspect`, end to end: the demo model's report has every section it promises
# (ops, parameters, node count after each pass, FLOPs), and a missing or corrupt file fails with
# a non-zero exit status and a message naming the file.
#
#   sh tools/inspect_command_test.sh BRIGADE_BIN MODEL.onnx
set -u
bin=$1
model=$2
tmp=$(mktemp -d /tmp/brigade_inspect_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A readable model: exit 0 and every section present.
if ! "$bin" inspect "$model" > "$tmp/out" 2> "$tmp/err"; then
  fail "inspect $model exited non-zero: $(cat "$tmp/err")"
fi
for section in '^model ' '^inputs' '^outputs' '^parameters  [1-9][0-9]* ' '^ops ([0-9]* nodes)' \
               '^passes ' '(loaded)' 'constant_folding' '^ops after optimization' \
               '^plan (batch 1)' 'FLOPs  *[1-9][0-9]* '; do
  grep -q "$section" "$tmp/out" || fail "report of $model lacks '$section'"
done
# --batch scales the plan's FLOPs: batch 4 is 4 x batch 1.
flops1=$(sed -n 's/^ *FLOPs *\([0-9]*\) .*/\1/p' "$tmp/out")
"$bin" inspect --batch 4 "$model" > "$tmp/out4" 2>&1 || fail "inspect --batch 4 exited non-zero"
flops4=$(sed -n 's/^ *FLOPs *\([0-9]*\) .*/\1/p' "$tmp/out4")
[ -n "$flops1" ] && [ "$flops4" = "$((flops1 * 4))" ] ||
  fail "batch 4 FLOPs '$flops4' is not 4 x batch 1 FLOPs '$flops1'"

# A missing file and a corrupt file: non-zero exit, stderr names the file, nothing on stdout.
printf 'this is not an ONNX model' > "$tmp/corrupt.onnx"
for bad in "$tmp/missing.onnx" "$tmp/corrupt.onnx"; do
  if "$bin" inspect "$bad" > "$tmp/out" 2> "$tmp/err"; then
    fail "inspect $bad exited 0"
  fi
  grep -qF "$bad" "$tmp/err" || fail "error for $bad does not name the file: $(cat "$tmp/err")"
  [ -s "$tmp/out" ] && fail "inspect $bad printed a report"
done

[ "$failures" -eq 0 ] && echo "brigade inspect: all checks passed"
[ "$failures" -eq 0 ]
