#!/usr/bin/env bash
# Figures of the VM-host lab (run by hand as root: `make bench-vm`):
#   1. `make demo`'s wall time on this machine (guest kernel cached), and
#      from its log the boot to agent ready, per guest: from qemu's start
#      to its agent's gRPC and gossip ports answering on the management
#      network (the lab's "VM host ready" log lines), for the demo's 2
#      senders and 1 receiver booted together;
#   2. the packet rates the guests reach: ROUNDS unpaced 1×1 runs of
#      DURATION with kernel pktgen, sent and received pps per run, and
#      where the frames that did not arrive were dropped (the receiver's
#      switch port: its tap toward a guest that could not keep up).
# The accelerator (kvm or tcg) is printed with every figure: KVM is used
# when /dev/kvm works. Not a pass/fail test: figures only (non-zero exit
# only when a run fails, or its log or JSON lacks a line or field read
# here).
#
# Environment: ROUNDS (3), DURATION (3s), LINERATE (./bin/linerate), NAME
# (the lab's name, "vf<pid>"). Every lab is removed after its run and on
# Ctrl-C (lab down). `make bench-smoke` runs it small: ROUNDS=1
# DURATION=1s (make demo and one 1×1 run: five guest boots).
set -euo pipefail
shopt -s inherit_errexit
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3s}
BIN=${LINERATE:-./bin/linerate}
NAME=${NAME:-vf$(($$ % 100000))}
root=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces, taps, qemu)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: jq missing (apt-get install jq)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable linerate (set LINERATE=, or make build)" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench: ROUNDS=$ROUNDS: want a positive whole number" >&2; exit 1; }

tmp=$(mktemp -d)
cleanup() {
	"$BIN" lab down --name "$NAME" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
echo
# The demo boots its guests as the boot figure wants them (2 senders and 1
# receiver together), so one run gives both figures.
echo "1. make demo (wall time, this machine, guest kernel cached) and its guests' boot to agent ready"
start=$(date +%s.%N)
if ! make -C "$root" --no-print-directory demo >"$tmp/demo.out" 2>&1; then
	echo "bench: make demo failed: $(tail -5 "$tmp/demo.out")" >&2
	exit 1
fi
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN {printf "   make demo: %.1f s\n", e - s}'
# One "VM host ready" line per guest (the lab's log,
# cmd/linerate/internal/lab/vmagents_linux.go), each with the three fields:
# none, or one without them, is a renamed line or field, not a figure.
sed -nE 's/.*VM host ready: .*host=([^ ]+) boot_to_agent=([^ ]+) accel=([^ ]+).*/\1 \3 \2/p' "$tmp/demo.out" >"$tmp/ready"
lines=$(grep -c 'VM host ready' "$tmp/demo.out" || true)
if [ "$lines" = 0 ] || [ "$(wc -l <"$tmp/ready")" != "$lines" ]; then
	echo "bench: make demo's log has $lines \"VM host ready\" lines, $(wc -l <"$tmp/ready") with host=, boot_to_agent= and accel=: $(grep -m3 'VM host' "$tmp/demo.out")" >&2
	exit 1
fi
printf '   %-6s %-6s %s\n' host accel boot_to_agent
while read -r h a d; do printf '   %-6s %-6s %s\n' "$h" "$a" "$d"; done <"$tmp/ready"
accel=$(awk '{ print $2; exit }' "$tmp/ready")

echo
echo "2. unpaced kernel pktgen, 1 sender → 1 receiver, $DURATION, accel $accel"
printf '   %-6s %12s %12s %12s %14s\n' round sent_pps received_pps lost switch_drops
for r in $(seq 1 "$ROUNDS"); do
	out=$tmp/r$r.json
	# Loss is expected here (a guest under TCG counts fewer packets than
	# another sends), and lab run's exit status with it; a run that failed
	# (status "failed", or no JSON) or lacks a field read below ends the
	# bench.
	"$BIN" lab run --hosts vm --name "$NAME" --senders 1 --receivers 1 --duration "$DURATION" \
		--json --log-level warn --results-dir "$tmp/results" >"$out" 2>"$tmp/r$r.err" || true
	if ! jq -e '(.status == "ok" or .status == "partial")
		and (.flows | length > 0) and all(.flows[0].achieved_pps, .flows[0].pps, .flows[0].lost; type == "number")
		and (.lab.switch_ports | type == "array" and length > 0 and all(.[]; .drops | type == "number"))' "$out" >/dev/null 2>&1; then
		echo "bench: round $r failed, or its JSON lacks status, flows[0].{achieved_pps,pps,lost} or lab.switch_ports[].drops: $(jq -r '.status + ": " + (.error // "")' "$out" 2>/dev/null || head -c 300 "$out") $(tail -5 "$tmp/r$r.err")" >&2
		exit 1
	fi
	jq -r --arg r "$r" '
		(.flows[0]) as $f
		| [$r, ($f.achieved_pps | floor), ($f.pps | floor), $f.lost,
		   ([.lab.switch_ports[].drops] | add)] | @tsv' "$out" |
		awk -F'\t' '{printf "   %-6s %12s %12s %12s %14s\n", $1, $2, $3, $4, $5}'
done
