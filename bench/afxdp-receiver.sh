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
# script. The afxdp receiver is probed once too: where the kernel refuses
# its redirect program the helper bpf_xdp_adjust_meta (the arrival stamp;
# this machine too, since the same change), its runs print "not run", the
# target is not judged, and only the xdp reference runs; any other failure
# to arm fails the script.
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

# probe_afxdp_recv: one afxdp receiver armed and stopped before anything
# is measured; sets AFXDP_NOTRUN (the line to print) when the kernel
# refuses its program the helper bpf_xdp_adjust_meta; fails on any other
# failure to arm.
AFXDP_NOTRUN=
probe_afxdp_recv() {
	local out=$tmp/probe.afxdp-recv
	ip netns exec "$nsB" "$BIN" recv --iface vb --method afxdp --cpus 1 --duration 60s --json >"$out" 2>"$out.err" &
	recv_pid=$!
	for _ in $(seq 1 100); do
		grep -q "armed: counting" "$out.err" && break
		kill -0 "$recv_pid" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q "armed: counting" "$out.err"; then
		kill -INT "$recv_pid" 2>/dev/null || true
		wait "$recv_pid" || { echo "bench: recv --method afxdp (the probe) did not stop cleanly: $(tail -3 "$out.err")" >&2; recv_pid=; return 1; }
		recv_pid=
		return 0
	fi
	kill "$recv_pid" 2>/dev/null || true
	wait "$recv_pid" 2>/dev/null || true
	recv_pid=
	grep -q 'cannot use helper bpf_xdp_adjust_meta' "$out.err" ||
		{ echo "bench: recv --method afxdp (the probe) did not arm: $(tail -3 "$out.err")" >&2; return 1; }
	AFXDP_NOTRUN="afxdp receiver: not run on this machine: the kernel refuses its redirect program the helper bpf_xdp_adjust_meta ($(grep -m1 'cannot use helper' "$out.err"))"
}
probe_afxdp_recv

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
[ -z "$AFXDP_NOTRUN" ] || kinds=(xdp)
pace=unpaced
[ -z "$RATE" ] || pace="paced at $RATE pps"
echo "afxdp receiver benchmark: $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, veth $nsA/va -> $nsB/vb"
sender_line
[ -z "$AFXDP_NOTRUN" ] || echo "$AFXDP_NOTRUN"
echo "$SENDER sender (1 thread on CPU 0, 64 B, $COUNT packets, $pace) into recv; afxdp readers on CPU 1; $ROUNDS rounds, alternating"
printf '%-6s %-10s %12s %11s %11s %10s %9s\n' round receiver sender_pps delivered counted ring_drops counted%
for r in $(seq 1 "$ROUNDS"); do
	order=("${kinds[@]}")
	((r % 2)) || [ -n "$AFXDP_NOTRUN" ] || order=(xdp afxdp-on afxdp-off)
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
[ -z "$AFXDP_NOTRUN" ] || printf '%-10s %14s %12s\n' afxdp-off "not run" "not run" afxdp-on "not run" "not run"
if [ -n "$AFXDP_NOTRUN" ]; then
	echo "target: the afxdp receiver counts 100 % of what the interface delivered: not judged (the afxdp receiver did not run on this machine)"
elif [ -s "$tmp/short" ]; then
	echo "target: the afxdp receiver counts 100 % of what the interface delivered at the $SENDER sender's rate: NOT met ($(paste -sd';' "$tmp/short"))"
else
	echo "target: the afxdp receiver counts 100 % of what the interface delivered at the $SENDER sender's rate: met in every afxdp run"
fi
