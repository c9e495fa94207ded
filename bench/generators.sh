#!/usr/bin/env bash
# Benchmark (run by hand as root: `make bench-generators`): the userspace
# generators against netsniff-ng trafgen and iperf3 on one veth pair
# between two namespaces, 64-byte frames (60 + FCS; iperf3 -l 18 makes the
# same frame), one sender thread on CPU 0, alternating A/B rounds. Every
# tool's rate is measured the same way: frames that reached the receiving
# interface, counted by `linerate recv --method xdp` running there (its
# XDP counter runs during every round), divided by the send window. For
# linerate's own runs it also checks that the receiver counted 100.000 % of
# the test frames the interface delivered (the driver's xdp_packets), per
# stream, with no duplicates or gaps. Not a pass/fail test: figures only.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-4}
BIN=${LINERATE:-./bin/linerate}
A=lr-bench-a B=lr-bench-b
[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces, XDP)" >&2; exit 1; }
for t in trafgen iperf3 jq; do command -v $t >/dev/null || { echo "bench: $t missing (make bench-generators installs it)" >&2; exit 1; }; done

cleanup() { ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add $A; ip netns add $B
ip -n $A link add va type veth peer name vb netns $B
for ns in $A $B; do ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1; ip -n $ns link set lo up; done
ip -n $A addr add 198.18.0.1/24 dev va; ip -n $B addr add 198.18.0.2/24 dev vb
ip -n $A link set va up; ip -n $B link set vb up
MAC=$(ip netns exec $B cat /sys/class/net/vb/address)
ip -n $A neigh replace 198.18.0.2 lladdr "$MAC" dev va nud permanent
sleep 1

cat > /tmp/lr-bench-trafgen.cfg <<CFG
{ $(echo "$MAC" | sed 's/^/0x/; s/:/, 0x/g'), 0x02,0x00,0x00,0x00,0x00,0x01, 0x08,0x00,
  0x45,0x00,0x00,0x2e, 0x00,0x00,0x00,0x00, 0x20,0x11,0x00,0x00, 198,18,0,1, 198,18,0,2,
  0x00,0x09,0x00,0x09,0x00,0x1a,0x00,0x00, fill(0x00, 18) }
CFG

recv_start() { # [stop flags]; returns once the receiver's XDP program is attached
	: > /tmp/lr-bench-recv.log
	# linerate's runs end on idleness; other tools' frames are not test
	# packets (no pktgen header), so those runs end on a fixed window.
	timeout 120 ip netns exec $B "$BIN" recv --iface vb --method xdp ${1:---until-idle 1500ms} --json > /tmp/lr-bench-recv.json 2> /tmp/lr-bench-recv.log &
	RPID=$!
	for _ in $(seq 100); do grep -q "armed: counting" /tmp/lr-bench-recv.log && return; sleep 0.1; done
	echo "bench: receiver did not arm:" >&2; cat /tmp/lr-bench-recv.log >&2; exit 1
}
recv_wait() { wait $RPID; }   # in this shell: a $(…) subshell cannot wait for it
recv_frames() { jq '.packets' /tmp/lr-bench-recv.json; }

run_linerate() { # backend → "pps checked"
	recv_start
	ip netns exec $A "$BIN" send --iface va --dst 198.18.0.2 --src 198.18.1.1 --dst-mac "$MAC" --duration ${SECS}s --cpus 0 \
		--backend "$1" --json --log-level error > /tmp/lr-bench-send.json
	recv_wait
	local frames; frames=$(recv_frames)
	jq -r --argjson f "$frames" --arg secs "$SECS" '
		[($f / ($secs|tonumber) | floor),
		 (if (.streams | length) == 1 and .streams[0].missing == 0 and .streams[0].duplicates == 0
		     and ([.streams[].received] | add) == .link.xdp_packets then "exact" else "NOT-EXACT" end)] | @tsv' /tmp/lr-bench-recv.json
	jq -r '"    sender: \(.packets) packets, \(.pps|floor) pps, \(.errors) errors"' /tmp/lr-bench-send.json >&2
	jq -r '"    receiver: \(.streams[0].received) received (xdp_packets \(.link.xdp_packets)), missing \(.streams[0].missing), duplicates \(.streams[0].duplicates)"' /tmp/lr-bench-recv.json >&2
}
run_trafgen() {
	recv_start "--duration $((SECS + 2))s"
	ip netns exec $A timeout -s INT ${SECS} trafgen --dev va --conf /tmp/lr-bench-trafgen.cfg --cpus 1 -Q >/dev/null 2>&1 || true
	recv_wait
	echo $(( $(recv_frames) / SECS ))
}
run_iperf3() {
	ip netns exec $B iperf3 -s -1 -B 198.18.0.2 >/dev/null 2>&1 & local SPID=$!
	sleep 0.5
	recv_start "--duration $((SECS + 2))s"
	ip netns exec $A taskset -c 0 iperf3 -c 198.18.0.2 -u -l 18 -b 0 -t ${SECS} >/dev/null 2>&1 || true
	recv_wait
	echo $(( $(recv_frames) / SECS ))
	wait $SPID 2>/dev/null || true
}

declare -A sum
for i in $(seq 1 "$ROUNDS"); do
	for tool in xdp trafgen afpacket iperf3; do
		case $tool in
			xdp|afpacket) run_linerate $tool > /tmp/lr-bench-row; read -r pps check < /tmp/lr-bench-row ;;
			trafgen) run_trafgen > /tmp/lr-bench-row; read -r pps < /tmp/lr-bench-row; check=- ;;
			iperf3) run_iperf3 > /tmp/lr-bench-row; read -r pps < /tmp/lr-bench-row; check=- ;;
		esac
		printf 'round %d  %-9s %10d pps  %s\n' "$i" "$tool" "$pps" "$check"
		sum[$tool]=$(( ${sum[$tool]:-0} + pps ))
	done
done
echo
for tool in xdp afpacket trafgen iperf3; do printf '%-9s mean %10d pps\n' $tool $(( sum[$tool] / ROUNDS )); done
awk -v x="${sum[xdp]}" -v a="${sum[afpacket]}" -v t="${sum[trafgen]}" -v p="${sum[iperf3]}" 'BEGIN {
	printf "ratios: xdp/trafgen %.1f (target >= 10), afpacket/trafgen %.2f (target >= 1.0), trafgen/iperf3 %.1f\n", x/t, a/t, t/p }'
