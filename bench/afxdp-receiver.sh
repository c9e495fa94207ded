#!/usr/bin/env bash
# Benchmark (run by hand as root: `make bench-afxdp-receiver`): does the
# afxdp receiver count 100 % of what the interface delivered at the
# fastest sender's rate? Like for like, in the same run, alternating, on
# one veth pair between two namespaces the script creates, 64-byte frames:
# `linerate send --backend xdp` (the fastest sender on a veth,
# docs/benchmarks.md; one thread on CPU 0, unpaced) into `linerate recv` on
# the peer with
#   afxdp-off  --method afxdp --need-wakeup off (auto's choice on a veth)
#   afxdp-on   --method afxdp --need-wakeup on
#   xdp        --method xdp (the reference: counting in the XDP program)
# the afxdp readers on CPU 1 (--cpus 1; the veth's one receive queue). On a
# veth the receiving side's XDP program, and for afxdp the copy of each
# frame into the socket, run in the sender's softirq on CPU 0, so the
# sender's rate is the rate this receiver takes.
#
# The sender is probed first with one packet (pick_sender, veth-pair.sh):
# on a kernel that refuses BPF_PROG_RUN's live-frame mode with EPERM even
# to root (this CI machine, 6.18.44-fc) xdp cannot send, and the script
# says so in one line and sends with the next fastest backend that runs,
# afxdp (else afpacket), naming it; its frames too reach the peer's XDP
# program in the sending CPU's softirq (veth schedules the peer's NAPI on
# the transmitting CPU). Any other failure of the xdp probe fails the
# script. Where the kernel refuses XDP programs bpf_xdp_adjust_meta (this
# machine too), the afxdp receiver stamps arrivals as it reads them, and
# says so in its method reason.
#
# Per run: the sender's pps,
# what the interface delivered (the receiving veth's xdp_packets: every
# frame its program saw), what the receiver counted (packets: the test
# frames and the few others, ARP or ND, its program saw), and the sockets' drops
# (ring_drops: frames the kernel had for a socket but no room for); the
# target is counted = delivered in every afxdp run. Not a pass/fail test:
# figures only; the exit status is non-zero only when a command fails or
# an output lacks a field read here.
#
# Environment: ROUNDS (5), COUNT (packets per run, 2000000), RATE (the
# sender's pps, --rate; unset: unpaced, its fastest), LINERATE
# (./bin/linerate). `make bench-smoke` runs it small (ROUNDS=1 COUNT=50000).
set -euo pipefail
shopt -s inherit_errexit
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-2000000}
BIN=${LINERATE:-./bin/linerate}
RATE=${RATE:-}

[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces, XDP, AF_XDP)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: jq missing (apt-get install jq)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable linerate (set LINERATE=, or make build)" >&2; exit 1; }
for v in ROUNDS COUNT ${RATE:+RATE}; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive whole number" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "bench: needs 2 CPUs (the sender on CPU 0, the readers on CPU 1)" >&2; exit 1; }

. "$(dirname "$0")/veth-pair.sh"
veth_pair ax$(($$ % 100000))
pick_sender

# run KIND ROUND: one send into a receiver of KIND; prints "pps delivered
# counted ring_drops".
run() {
	local kind=$1 r=$2 out=$tmp/$1.$2 args
	case $kind in
	afxdp-off) args=(--method afxdp --need-wakeup off --cpus 1) ;;
	afxdp-on) args=(--method afxdp --need-wakeup on --cpus 1) ;;
	xdp) args=(--method xdp) ;;
	esac
	ip netns exec "$nsB" "$BIN" recv --iface vb "${args[@]}" --until-idle 1s --json >"$out.recv" 2>"$out.recv.err" &
	recv_pid=$!
	recv_armed "$out.recv.err" "recv $kind"
	send_into "$out" "recv $kind" ${RATE:+--rate "$RATE"}
	jq -e '(.packets | type) == "number" and (.link.xdp_packets | type) == "number" and (.ring_drops | type) == "number"' "$out.recv" >/dev/null ||
		{ echo "bench: recv --json lacks packets, link.xdp_packets or ring_drops: $(head -c 300 "$out.recv")" >&2; return 1; }
	if [ "$r" = 1 ]; then echo "$kind: $(jq -r .method_reason "$out.recv")" >>"$tmp/reasons"; fi
	echo "$(jq -r .pps "$out.send") $(jq '.link.xdp_packets' "$out.recv") $(jq .packets "$out.recv") $(jq .ring_drops "$out.recv")"
}

kinds=(afxdp-off afxdp-on xdp)
pace=unpaced
[ -z "$RATE" ] || pace="paced at $RATE pps"
echo "afxdp receiver benchmark: $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, veth $nsA/va -> $nsB/vb"
sender_line
echo "$SENDER sender (1 thread on CPU 0, 64 B, $COUNT packets, $pace) into recv; afxdp readers on CPU 1; $ROUNDS rounds, alternating"
printf '%-6s %-10s %12s %11s %11s %10s %9s\n' round receiver sender_pps delivered counted ring_drops counted%
for r in $(seq 1 "$ROUNDS"); do
	order=("${kinds[@]}")
	((r % 2)) || order=(xdp afxdp-on afxdp-off)
	for kind in "${order[@]}"; do
		read -r pps delivered counted drops < <(run "$kind" "$r")
		pct=$(awk -v c="$counted" -v d="$delivered" 'BEGIN {printf "%.3f", d ? 100 * c / d : 0}')
		printf '%-6s %-10s %12.0f %11d %11d %10d %9s\n' "$r" "$kind" "$pps" "$delivered" "$counted" "$drops" "$pct"
		echo "$pps" >>"$tmp/pps.$kind"
		echo "$pct" >>"$tmp/pct.$kind"
		[ "$kind" = xdp ] || [ "$counted" = "$delivered" ] || echo "$kind round $r: counted $counted of $delivered" >>"$tmp/short"
	done
done
echo
cat "$tmp/reasons"
echo
printf '%-10s %14s %12s\n' receiver median_pps min_counted%
for kind in "${kinds[@]}"; do
	printf '%-10s %14.0f %12s\n' "$kind" "$(median <"$tmp/pps.$kind")" "$(sort -g "$tmp/pct.$kind" | head -1)"
done
if [ -s "$tmp/short" ]; then
	echo "target: the afxdp receiver counts 100 % of what the interface delivered at the $SENDER sender's rate: NOT met ($(paste -sd';' "$tmp/short"))"
else
	echo "target: the afxdp receiver counts 100 % of what the interface delivered at the $SENDER sender's rate: met in every afxdp run"
fi
