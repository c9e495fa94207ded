#!/bin/sh
# Benchmark (runs inside the qemu guest; `make bench-pktgen` boots it):
# the same pktgen run configured by a plain shell loop, the way the
# kernel's samples/pktgen scripts write /proc/net/pktgen, and by
# `linerate send --backend kernel`, alternately, ROUNDS times each.
# Prints every trial's pps (pktgen's own Result) and the ratio of the
# medians, linerate / shell. Target: >= 0.98 (the Go driver costs nothing
# measurable). Not a pass/fail test: machines here are noisy; but a trial
# that fails or prints no pps figure fails the script (exit 1), which fails
# TestBenchPktgenDriver. `make bench-smoke` runs it small: ROUNDS=1
# COUNT=30000.
set -eu
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-300000}
PG=/proc/net/pktgen

echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6
ip link add lrb0 type veth          # busybox ip: the peer is named veth0
ip link set veth0 name lrb1
ip link set lrb0 up
ip link set lrb1 up
sleep 1
MAC=$(cat /sys/class/net/lrb1/address)

pg() { # file cmd: one write, then require Result: OK: (samples' proc_cmd)
	echo "$2" > "$PG/$1"
	case "$1" in pgctrl|kpktgend_*) return ;; esac
	grep -q "Result: OK:" "$PG/$1" || { echo "pktgen $1: '$2' refused" >&2; exit 1; }
}

shell_run() {
	pg pgctrl reset
	pg kpktgend_0 rem_device_all
	pg kpktgend_0 "add_device lrb0@0"
	for c in "count $COUNT" "pkt_size 60" "delay 0" "dst_min 198.18.0.2" "dst_max 198.18.0.2" \
		"src_min 198.18.1.1" "src_max 198.18.1.1" "dst_mac $MAC" \
		"udp_src_min 9" "udp_src_max 9" "udp_dst_min 9" "udp_dst_max 9"; do
		pg lrb0@0 "$c"
	done
	echo start > $PG/pgctrl
	sed -n 's/.* \([0-9]*\)pps .*/\1/p' $PG/lrb0@0
	pg pgctrl reset
}

# The guest has no jq: the summary's top-level "pps" is its first line
# indented by two spaces (linerate send --json, pktgen.Summary).
linerate_run() {
	linerate send --log-level error --iface lrb0 --dst 198.18.0.2 --src 198.18.1.1 --dst-mac "$MAC" \
		--count "$COUNT" --cpus 0 --frame-size 64 --backend kernel --json >/tmp/send.json ||
		{ echo "linerate send failed: $(cat /tmp/send.json)" >&2; exit 1; }
	sed -n 's/^  "pps": \([0-9.]*\),*$/\1/p' /tmp/send.json | head -n 1 | cut -d. -f1
}

# pps WHAT VALUE: VALUE is a positive whole number, or the bench fails
# naming WHAT (a changed Result line or JSON key, not a figure).
pps() {
	case $2 in
	'' | *[!0-9]* | 0) echo "bench: $1 printed no pps figure (got '$2')" >&2; exit 1 ;;
	esac
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: > /tmp/shell.pps
: > /tmp/linerate.pps
i=1
while [ "$i" -le "$ROUNDS" ]; do
	s=$(shell_run)
	pps "shell-configured pktgen ($PG/lrb0@0 Result)" "$s"
	l=$(linerate_run)
	pps "linerate send --backend kernel --json" "$l"
	echo "round $i: shell $s pps, linerate $l pps"
	echo "$s" >> /tmp/shell.pps
	echo "$l" >> /tmp/linerate.pps
	i=$((i + 1))
done
S=$(median < /tmp/shell.pps)
L=$(median < /tmp/linerate.pps)
awk -v s="$S" -v l="$L" -v n="$COUNT" 'BEGIN {
	r = l / s
	printf "median pps: shell %d, linerate %d; ratio linerate/shell %.3f (target >= 0.98: %s); %d packets of 64 bytes per trial\n",
		s, l, r, (r >= 0.98 ? "met" : "NOT met"), n
}'
