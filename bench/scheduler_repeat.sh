#!/usr/bin/env bash
# scheduler_repeat.sh: runs build/bench/scheduler_bench REPEATS times with the same flags and
# prints, per (load, config), the median of each column over the runs plus every run's p99.
# Single p99s of an open-loop run on a 2-core machine move by 2x between runs (a descheduled
# instance, a backlog that tips a fixed-delay batcher into full batches), so the policies'
# ratios are read from medians. Printed, never asserted.
#
#   REPEATS=3 bench/scheduler_repeat.sh --model_dir=models/fashion_mnist_onnx --loads=80,120 ...
#
# Each run's full output (with the P99 model's explain lines) is kept in $OUT_DIR (default
# bench/out/scheduler_repeat), one file per run.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${REPEATS:-3}"
out_dir="${OUT_DIR:-bench/out/scheduler_repeat}"
bench="${BENCH:-build/bench/scheduler_bench}"
mkdir -p "$out_dir"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
files=()
for ((i = 1; i <= repeats; ++i)); do
  file="$out_dir/$stamp-run$i.md"
  echo "# run $i/$repeats: $bench $*  (uptime: $(uptime | sed 's/.*load/load/'))" >&2
  "$bench" "$@" 2>/dev/null >"$file"
  files+=("$file")
done
grep -h '^# scheduler_bench\|^# .*capacity' "${files[0]}"
echo "# $repeats runs; medians per column; p99 of every run in the last column"
echo
echo "| load | config | offered/s | throughput/s | p50 ms | p99 ms | shed % | mean batch | busy % | p99 ms of each run | stolen ms of each run | server refusal p99 of each run |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# Table rows only (not the explain lines): | load | config | offered | thr | p50 | p99 | shed |
# shed p99 (client / server) | mean batch | slo% | busy% | stolen ms |. The server's refusal
# bound (µs) and the stolen CPU time are kept per run.
awk -F'|' '
  function median(list,    n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $2 ~ /%/ && $3 !~ /↳/ {
    key = $2 "|" $3
    if (!(key in seen)) { seen[key] = 1; order[++count] = key }
    offered[key] = offered[key] " " $4; thr[key] = thr[key] " " $5; p50[key] = p50[key] " " $6
    p99[key] = p99[key] " " $7; shed[key] = shed[key] " " $8; batch[key] = batch[key] " " $10
    busy[key] = busy[key] " " $12; stolen_ms = $13; gsub(/ /, "", stolen_ms)
    stolen[key] = stolen[key] " " stolen_ms
    split($9, refusal, "/"); gsub(/ /, "", refusal[2]); refused[key] = refused[key] " " refusal[2]
  }
  END {
    for (k = 1; k <= count; ++k) {
      key = order[k]; split(key, parts, "|")
      printf "|%s|%s| %.0f | %.0f | %.2f | %.2f | %.1f | %.1f | %.0f |%s |%s |%s |\n", parts[1],
             parts[2], median(offered[key]), median(thr[key]), median(p50[key]), median(p99[key]),
             median(shed[key]), median(batch[key]), median(busy[key]), p99[key], stolen[key],
             refused[key]
    }
  }' "${files[@]}"
