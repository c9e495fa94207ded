#!/usr/bin/env bash
# Figures of the VM-host lab (run by hand as root: `make bench-vm`):
#   1. boot to agent ready, per guest: from qemu's start to its agent's
#      gRPC and gossip ports answering on the management network (the lab's
#      "VM host ready" log lines), for a lab of SENDERS + 1 guests;
#   2. the packet rates the guests reach: ROUNDS unpaced 1×1 runs of
#      DURATION with kernel pktgen, sent and received pps per run, and
#      where the frames that did not arrive were dropped (the receiver's
#      switch port: its tap toward a guest that could not keep up);
#   3. `make demo`'s wall time on this machine (DEMO=0 skips it).
# The accelerator (kvm or tcg) is printed with every figure: KVM is used
# when /dev/kvm works. Not a pass/fail test: figures only (non-zero exit
# only when a run fails).
#
# Environment: ROUNDS (3), DURATION (3s), SENDERS (2), DEMO (1), LINERATE
# (./bin/linerate), NAME (the lab's name, "vf<pid>"). Every lab is removed
# after its run and on Ctrl-C (lab down).
set -euo pipefail
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3s}
SENDERS=${SENDERS:-2}
DEMO=${DEMO:-1}
BIN=${LINERATE:-./bin/linerate}
NAME=${NAME:-vf$(($$ % 100000))}

[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces, taps, qemu)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: jq missing (apt-get install jq)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable linerate (set LINERATE=, or make build)" >&2; exit 1; }

tmp=$(mktemp -d)
cleanup() {
	"$BIN" lab down --name "$NAME" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
echo
echo "1. boot to agent ready ($SENDERS senders, 1 receiver, booted together)"
senders=$(seq -s, -f 's%g' 1 "$SENDERS")
if ! "$BIN" lab run --hosts vm --name "$NAME" --senders "$SENDERS" --receivers 1 --pattern fan-in --count 1000 \
	--json --log-level info --results-dir "$tmp/results" >"$tmp/boot.json" 2>"$tmp/boot.err"; then
	echo "bench: the boot run failed: $(jq -r '.error // empty' "$tmp/boot.json" 2>/dev/null) $(tail -5 "$tmp/boot.err")" >&2
	exit 1
fi
printf '   %-6s %-6s %s\n' host accel boot_to_agent
sed -nE 's/.*VM host ready: .*host=([^ ]+) boot_to_agent=([^ ]+) accel=([^ ]+).*/\1 \3 \2/p' "$tmp/boot.err" |
	while read -r h a d; do printf '   %-6s %-6s %s\n' "$h" "$a" "$d"; done
accel=$(sed -nE 's/.*VM host ready: .* accel=([^ ]+).*/\1/p' "$tmp/boot.err" | head -1)
unset senders

echo
echo "2. unpaced kernel pktgen, 1 sender → 1 receiver, $DURATION, accel ${accel:-?}"
printf '   %-6s %12s %12s %12s %14s\n' round sent_pps received_pps lost switch_drops
for r in $(seq 1 "$ROUNDS"); do
	out=$tmp/r$r.json
	# Loss is expected here (a guest under TCG counts fewer packets than
	# another sends): the run's status may be "loss"; any other failure
	# ends the bench.
	"$BIN" lab run --hosts vm --name "$NAME" --senders 1 --receivers 1 --duration "$DURATION" \
		--json --log-level warn --results-dir "$tmp/results" >"$out" 2>"$tmp/r$r.err" || true
	if ! jq -e '.flows | length > 0' "$out" >/dev/null 2>&1; then
		echo "bench: round $r failed: $(jq -r '.error // empty' "$out" 2>/dev/null) $(tail -5 "$tmp/r$r.err")" >&2
		exit 1
	fi
	jq -r --arg r "$r" '
		(.flows[0]) as $f
		| [$r, ($f.achieved_pps | floor), ($f.pps | floor), $f.lost,
		   ([.lab.switch_ports[].drops] | add)] | @tsv' "$out" |
		awk -F'\t' '{printf "   %-6s %12s %12s %12s %14s\n", $1, $2, $3, $4, $5}'
done

if [ "$DEMO" = 1 ]; then
	echo
	echo "3. make demo (wall time, this machine, guest kernel cached)"
	root=$(cd "$(dirname "$0")/.." && pwd)
	start=$(date +%s.%N)
	if ! make -C "$root" demo >"$tmp/demo.out" 2>&1; then
		echo "bench: make demo failed: $(tail -5 "$tmp/demo.out")" >&2
		exit 1
	fi
	end=$(date +%s.%N)
	awk -v s="$start" -v e="$end" 'BEGIN {printf "   %.1f s\n", e - s}'
fi
