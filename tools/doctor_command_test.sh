#!/bin/sh
# `brigade doctor`, end to end: on this machine (every check reports, text and JSON agree, the
# exit status is 1 exactly when a check fails) and on the committed fixture hosts via --root
# (the tuned one exits 0, the SMT-on powersave one with the reference BLAS exits 1, the container
# with the defaults repository fails its CPU quota), and a missing repository exits 2.
#
#   sh tools/doctor_command_test.sh BRIGADE_BIN TESTDATA
set -u
bin=$1
testdata=$2
tmp=$(mktemp -d /tmp/brigade_doctor_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
checks="smt cpufreq isa numa threads cpu_quota blas thp nofile alignment"

# This machine: every check has a line, and the exit status follows the fail count.
"$bin" doctor > "$tmp/host.txt" 2> "$tmp/err"
status=$?
cat "$tmp/host.txt"
for check in $checks; do
  grep -Eq "^(PASS|WARN|FAIL|UNKNOWN) +$check " "$tmp/host.txt" || fail "no line for $check"
done
fails=$(sed -n 's/^brigade doctor: .* \([0-9]*\) fail, .*/\1/p' "$tmp/host.txt")
if [ "$fails" = 0 ]; then want=0; else want=1; fi
[ "$status" = "$want" ] || fail "this host: $fails failing check(s) but exit status $status"
"$bin" doctor --json > "$tmp/host.json" 2>> "$tmp/err"
python3 - "$tmp/host.json" "$fails" <<'PY' || fail "this host's JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
names = [c["check"] for c in doc["checks"]]
assert names == "smt cpufreq isa numa threads cpu_quota blas thp nofile alignment".split(), names
assert doc["counts"]["fail"] == int(sys.argv[2]), doc["counts"]
assert all(c["evidence"] or c["verdict"] == "unknown" for c in doc["checks"]), doc
PY

# The fixtures: each host's exit status, and the verdicts that make it.
verdict() {  # verdict FILE CHECK
  sed -n "s/^\([A-Z]*\) *$2 .*/\1/p" "$1"
}
expect() {  # expect NAME STATUS CHECK=VERDICT... -- ARGS...
  name=$1
  want=$2
  shift 2
  pairs=""
  while [ "$1" != "--" ]; do pairs="$pairs $1"; shift; done
  shift
  "$bin" doctor "$@" > "$tmp/$name.txt" 2>&1
  got=$?
  [ "$got" = "$want" ] || fail "$name: exit status $got, want $want: $(cat "$tmp/$name.txt")"
  for pair in $pairs; do
    v=$(verdict "$tmp/$name.txt" "${pair%%=*}")
    [ "$v" = "${pair#*=}" ] || fail "$name: ${pair%%=*} is '$v', want ${pair#*=}"
  done
}
expect tuned 0 smt=PASS cpufreq=PASS isa=PASS numa=PASS threads=PASS blas=PASS nofile=PASS \
  alignment=PASS -- \
  --root "$testdata/tuned" --model-repository "$testdata/repositories/pinned"
expect smt_powersave 1 smt=WARN cpufreq=FAIL blas=FAIL nofile=FAIL -- \
  --root "$testdata/smt_powersave"
expect smt_powersave_raised 1 nofile=PASS -- --root "$testdata/smt_powersave" \
  --max-connections 960
expect container 1 threads=WARN cpu_quota=FAIL numa=WARN -- --root "$testdata/container" \
  --model-repository "$testdata/repositories/defaults"
"$bin" doctor --json --root "$testdata/container" > "$tmp/container.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["counts"]["fail"]==0, d["counts"]' \
  "$tmp/container.json" || fail "container without a repository should not fail"

# A repository that is not there: exit 2 and a message naming it.
"$bin" doctor --model-repository "$tmp/none" > "$tmp/out" 2> "$tmp/err"
[ $? = 2 ] || fail "missing repository: exit status not 2"
grep -qF "$tmp/none" "$tmp/err" || fail "missing repository not named: $(cat "$tmp/err")"

[ "$failures" -eq 0 ] && echo "brigade doctor: all checks passed"
[ "$failures" -eq 0 ]
