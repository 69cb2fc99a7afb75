#!/bin/sh
# Writes the fixture hosts of `brigade doctor`'s tests: the files of /proc and /sys (and the
# libblas.so.3 links) each check reads, with values of the kind those hosts show. Run from this
# folder; it rewrites tuned/, smt_powersave/ and container/.
#
#   tuned          8 cores, SMT off, performance governor, AVX-512 with AMX, two NUMA nodes,
#                  THP always, no CPU quota, OpenBLAS, 65536 open files.
#   smt_powersave  4 logical CPUs on 2 cores (SMT on), powersave under acpi-cpufreq, AVX2
#                  without VNNI, THP never, cgroup v1 without quota, the reference BLAS, 1024
#                  open files.
#   container      16 CPUs, no cpufreq (a VM), AVX-512 VNNI, no NUMA in sysfs, cgroup v2 with
#                  cpu.max of 2 CPUs, THP madvise, no libblas (no libtorch), 1048576 open files.
set -eu
cd "$(dirname "$0")"

put() {  # put FILE TEXT: FILE under the current host, holding TEXT and a newline
  mkdir -p "$host/$(dirname "$1")"
  printf '%s\n' "$2" > "$host/$1"
}
cpuinfo() {  # cpuinfo N FLAGS
  mkdir -p "$host/proc"
  : > "$host/proc/cpuinfo"
  i=0
  while [ "$i" -lt "$1" ]; do
    printf 'processor\t: %s\nmodel name\t: %s\nflags\t\t: %s\n\n' "$i" "$model" "$2" \
      >> "$host/proc/cpuinfo"
    i=$((i + 1))
  done
}
limits() {  # limits SOFT HARD
  put proc/self/limits "$(printf 'Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax open files            %-20s %-20s files     \nMax processes             63704                63704                processes ' "$1" "$2")"
}
blas() {  # blas TARGET: libblas.so.3 -> /etc/alternatives/... -> TARGET (a file)
  mkdir -p "$host/usr/lib/x86_64-linux-gnu" "$host/etc/alternatives"
  ln -sfn /etc/alternatives/libblas.so.3-x86_64-linux-gnu \
    "$host/usr/lib/x86_64-linux-gnu/libblas.so.3"
  ln -sfn "$1" "$host/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
  mkdir -p "$host/$(dirname "$1")"
  printf 'stand-in for a shared library\n' > "$host/$1"
}
base="fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi1 bmi2"
avx512="avx512f avx512dq avx512cd avx512bw avx512vl"

host=tuned
rm -rf "$host"
model="Intel(R) Xeon(R) Platinum 8480+"
cpuinfo 8 "$base $avx512 avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8"
put sys/devices/system/cpu/online 0-7
put sys/devices/system/cpu/smt/control off
for c in 0 1 2 3 4 5 6 7; do
  put "sys/devices/system/cpu/cpu$c/topology/thread_siblings_list" "$c"
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor" performance
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_driver" acpi-cpufreq
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_cur_freq" 3500000
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_max_freq" 3500000
  put "sys/devices/system/cpu/cpu$c/cpufreq/cpuinfo_max_freq" 3500000
done
put sys/devices/system/node/node0/cpulist 0-3
put sys/devices/system/node/node1/cpulist 4-7
put sys/kernel/mm/transparent_hugepage/enabled "[always] madvise never"
put sys/kernel/mm/transparent_hugepage/defrag "always defer defer+madvise [madvise] never"
put proc/self/cgroup "0::/system.slice/brigade.service"
put sys/fs/cgroup/system.slice/brigade.service/cpu.max "max 100000"
put sys/fs/cgroup/system.slice/cpu.max "max 100000"
limits 65536 524288
blas /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3

host=smt_powersave
rm -rf "$host"
model="Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz"
cpuinfo 4 "$base ht"
put sys/devices/system/cpu/online 0-3
put sys/devices/system/cpu/smt/control on
for c in 0 1 2 3; do
  put "sys/devices/system/cpu/cpu$c/topology/thread_siblings_list" "$((c % 2)),$((c % 2 + 2))"
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor" powersave
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_driver" acpi-cpufreq
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_cur_freq" 1200000
  put "sys/devices/system/cpu/cpu$c/cpufreq/scaling_max_freq" 2500000
  put "sys/devices/system/cpu/cpu$c/cpufreq/cpuinfo_max_freq" 3300000
done
put sys/devices/system/node/node0/cpulist 0-3
put sys/kernel/mm/transparent_hugepage/enabled "always madvise [never]"
put sys/kernel/mm/transparent_hugepage/defrag "always defer defer+madvise [madvise] never"
put proc/self/cgroup "$(printf '4:memory:/user.slice\n2:cpu,cpuacct:/user.slice\n1:name=systemd:/user.slice')"
put sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.cfs_quota_us -1
put sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.cfs_period_us 100000
limits 1024 4096
blas /usr/lib/x86_64-linux-gnu/blas/libblas.so.3

host=container
rm -rf "$host"
model="AMD EPYC 7763 64-Core Processor"
cpuinfo 16 "$base $avx512 avx512_vnni hypervisor"
put sys/devices/system/cpu/online 0-15
for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
  put "sys/devices/system/cpu/cpu$c/topology/thread_siblings_list" "$c"
done
put sys/kernel/mm/transparent_hugepage/enabled "always [madvise] never"
put sys/kernel/mm/transparent_hugepage/defrag "always defer defer+madvise [madvise] never"
put proc/self/cgroup "0::/"
put sys/fs/cgroup/cpu.max "200000 100000"
put sys/fs/cgroup/cpuset.cpus.effective 0-15
limits 1048576 1048576
mkdir -p "$host/usr/lib/x86_64-linux-gnu"
printf 'stand-in for a shared library\n' > "$host/usr/lib/x86_64-linux-gnu/libc.so.6"

# Model repositories: two models pinned one per NUMA node of `tuned` (8 threads on 8 cores), and
# two models with the defaults (each takes every core).
rm -rf repositories
mkdir -p repositories/pinned/detector repositories/pinned/classifier \
  repositories/defaults/detector repositories/defaults/classifier repositories/defaults/pipeline
cat > repositories/pinned/detector/config.pbtxt <<'PB'
name: "detector"
backend: "onnxruntime"
instance_group [ { count: 2 kind: KIND_CPU cpus: [0, 1, 2, 3] intra_op_threads: 2 } ]
PB
cat > repositories/pinned/classifier/config.pbtxt <<'PB'
name: "classifier"
platform: "pytorch_libtorch"
instance_group [ { count: 1 kind: KIND_CPU cpus: [4, 5, 6, 7] intra_op_threads: 4 } ]
PB
cat > repositories/defaults/detector/config.pbtxt <<'PB'
name: "detector"
backend: "onnxruntime"
PB
cat > repositories/defaults/classifier/config.pbtxt <<'PB'
name: "classifier"
platform: "pytorch_libtorch"
PB
cat > repositories/defaults/pipeline/config.pbtxt <<'PB'
name: "pipeline"
platform: "ensemble"
PB
