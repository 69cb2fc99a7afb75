# Sourced by the bench scripts that start servers themselves (http_cpu_floor.sh,
# grpc_infer_api.sh): a scratch folder WORK, the PIDS array whose processes are stopped (TERM,
# then waited for) and WORK removed when the script exits, a free loopback port, and a process's
# CPU time in clock ticks (utime + stime from /proc/PID/stat).
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
