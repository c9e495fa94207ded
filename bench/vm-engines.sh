#!/usr/bin/env bash
# Benchmark of the engines in the VM-host lab (run by hand as root: `make
# bench-vm-engines`): the issue 21 comparison of bench/generators.sh and
# bench/afxdp-receiver.sh, on virtio_net between two qemu guests (`linerate
# lab run --hosts vm --senders 1 --receivers 1`: 4 queue pairs, 4 vCPUs a
# guest, TCG unless /dev/kvm works). Like for like: every run is one lab run
# of the same shape, unpaced, 64-byte frames (the smallest, the default),
# DURATION long, --threads THREADS, the kinds alternating in each of ROUNDS
# rounds, medians.
#   1. senders, all into the same sink (the receiver's --method xdp):
#      --backend kernel (pktgen in the guest), xdp (XDP live frames: the
#      guest's virtio_net, Debian 6.1, transmits XDP frames only while a
#      native XDP program is attached to the sending interface itself, so
#      the backend attaches its own XDP_PASS program for the send and
#      detaches it after; its backend_notes say so), afxdp --need-wakeup
#      off, afxdp --need-wakeup on, afpacket, trafgen. Per run the sent pps (the flow's
#      achieved_pps: what the sender put out over its own send time) and
#      the received pps (the flow's pps), the test frames the switch's
#      port s1 took in from the sender (switch_in: what left its guest;
#      the xdp backend's sent counts frames its driver did not transmit
#      when it cannot tell them apart per thread, as its warning says);
#      the ratios of medians afxdp/xdp,
#      afxdp/afpacket, afxdp/kernel, afxdp/trafgen and need_wakeup on/off; each sender's
#      backend_notes, from round 1.
#   2. receivers, the fastest sender of part 1 (by median sent pps, of
#      those that leave need_wakeup to the receiver: not afxdp-on or
#      afxdp-off, while another ran; FASTEST= names one instead) into --method xdp (the reference),
#      afxdp (need_wakeup auto: off on virtio_net), afxdp-off and
#      afxdp-on (--need-wakeup off and on: a run's policy is the AF_XDP
#      sockets' at both ends, so an afxdp FASTEST must ask the same) and
#      afpacket. Per run what the receiver counted (the flow's
#      received) against what its interface was delivered: the lab
#      switch's port toward the receiver (lab.switch_ports[] with to = r1),
#      tx_packets, the frames its tap handed to the guest (the switch's
#      count; the guest's own rx counters are not in the run's JSON), and
#      that port's drops (frames the guest did not take off its tap).
#      Each receiver's method_reason, from round 1, says what it chose.
# trafgen (netsniff-ng's, this machine's /usr/sbin/trafgen) is not an
# engine of linerate's agents, so its row is not a lab run but the same
# lab by hand, as bench/generators.sh runs it on the veth pair: `lab up`
# of the same two guests with `--guest-file trafgen` (the binary with its
# interpreter and libraries), in r1 `linerate recv --method xdp` on data0
# (the same XDP counting sink, started with `lab exec`, armed before
# trafgen starts), in s1 `trafgen --cpus THREADS` stopped by SIGINT after DURATION
# sending 64-byte frames s1 → r1 with pktgen's header (sequence a
# constant 1, as on the veth pair: the receiver counts the repeats as
# duplicates on the same XDP path), then 1 s (the lab run's drain) and
# the receiver stopped. Its sent pps is trafgen's own count over its own
# send time (its CPU statistics: the longest of its processes), the
# received pps what the receiver counted over that time; the switch's
# port toward r1 (tx_packets) and the ports' drops are read from the
# switch namespace around it. Not the same: no agent tunes either guest
# (queue IRQs where the guest left them; trafgen -Q leaves them too) and
# trafgen's processes run on CPUs 0..THREADS-1, not node 1's; one stream.
# trafgen cannot be FASTEST (part 2's runs are lab runs).
#
# One lab run per row (trafgen's: one lab up): a lab run boots its two guests (about 8 s each under
# TCG, together) and removes them; `lab up` with `linerate run` against it
# would reuse them, but only `lab run` adds the switch's port counters that
# part 2 reads (and the loss accounting checks).
#
# Not a pass/fail test: figures only. The exit status is non-zero when a
# run fails (status neither ok nor partial, or no JSON) or its JSON lacks a
# field read here; loss is a figure (a guest under TCG drains less than
# another sends). The lab (NAME) is removed after every run, on exit and
# on Ctrl-C (lab down --name).
#
# Environment: ROUNDS (3), DURATION (3s), THREADS (2: one per CPU of the
# data NIC's node in a 4-vCPU guest, the lab's default there), SENDERS
# ("kernel xdp afxdp-off afxdp-on afpacket trafgen"), RECEIVERS ("xdp
# afxdp-off afxdp-on afpacket"; afxdp: auto), FASTEST (unset: from part 1), LINERATE (./bin/linerate),
# NAME (the lab's name, "ve<pid>"). Not in `make bench-smoke` (make test's
# budget is full, and every row is a lab run of two guest boots); the
# smallest run by hand: ROUNDS=1 DURATION=1s SENDERS=afxdp-on
# RECEIVERS=afxdp FASTEST=afxdp-on (two lab runs).
set -euo pipefail
shopt -s inherit_errexit
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3s}
THREADS=${THREADS:-2}
SENDERS=${SENDERS-kernel xdp afxdp-off afxdp-on afpacket trafgen}
RECEIVERS=${RECEIVERS-xdp afxdp-off afxdp-on afpacket}
FASTEST=${FASTEST:-}
BIN=${LINERATE:-./bin/linerate}
NAME=${NAME:-ve$(($$ % 100000))}

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces, taps, qemu)"
command -v jq >/dev/null || die "jq missing (apt-get install jq)"
case " $SENDERS " in *" trafgen "*)
	command -v trafgen >/dev/null || die "trafgen missing (apt-get install netsniff-ng; make bench-vm-engines installs it)"
	[[ $DURATION =~ ^[1-9][0-9]*s$ ]] || die "DURATION=$DURATION: trafgen's runs (timeout in the guest) want whole seconds, e.g. 3s" ;;
esac
[ -x "$BIN" ] || die "$BIN is not an executable linerate (set LINERATE=, or make build)"
for v in ROUNDS THREADS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive whole number"
done
senders="kernel xdp afxdp-off afxdp-on afpacket trafgen"
for k in $SENDERS ${FASTEST:+$FASTEST}; do
	case " $senders " in *" $k "*) ;; *) die "SENDERS/FASTEST: $k is not a sender here ($senders)" ;; esac
done
for k in $RECEIVERS; do
	case $k in xdp | afxdp | afxdp-off | afxdp-on | afpacket) ;; *) die "RECEIVERS: $k is not a receiver here (xdp afxdp afxdp-off afxdp-on afpacket)" ;; esac
done
# check_wakeup: a run has one need_wakeup policy, for the AF_XDP sockets
# at both ends, so an afxdp-on or afxdp-off FASTEST (given, or found by
# part 1) cannot meet a receiver that names another one, and gives its
# own to a receiver that names none (afxdp).
check_wakeup() {
	for k in $RECEIVERS; do
		case ${FASTEST:-}:$k in afxdp-on:afxdp-off | afxdp-off:afxdp-on | afxdp-o*:afxdp)
			die "FASTEST=$FASTEST with receiver $k: a run's --need-wakeup is both ends'; want a receiver of the same policy, or another FASTEST" ;;
		esac
	done
}
check_wakeup
[ "$FASTEST" != trafgen ] || die "FASTEST=trafgen: part 2's runs are lab runs, whose senders are linerate's engines"
read -ra S <<<"$SENDERS"
read -ra R <<<"$RECEIVERS"
[ ${#S[@]} -gt 0 ] || [ -n "$FASTEST" ] || die "SENDERS is empty and FASTEST unset: no sender for part 2"

tmp=$(mktemp -d)
cleanup() {
	[ -z "${UPPID:-}" ] || { kill -INT "$UPPID" 2>/dev/null; wait "$UPPID" 2>/dev/null; } || true
	"$BIN" lab down --name "$NAME" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# sender_args KIND: the run's sender flags.
sender_args() {
	case $1 in
	kernel | xdp | afpacket) echo "--backend $1" ;;
	afxdp-off) echo "--backend afxdp --need-wakeup off" ;;
	afxdp-on) echo "--backend afxdp --need-wakeup on" ;;
	esac
}

# method_args KIND: the run's receiver flags.
method_args() {
	case $1 in
	afxdp-off) echo "--method afxdp --need-wakeup off" ;;
	afxdp-on) echo "--method afxdp --need-wakeup on" ;;
	*) echo "--method $1" ;;
	esac
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# run OUT SENDER METHOD: one lab run; leaves its JSON in OUT.json and
# checks the fields read below. A failed run or a missing field ends the
# bench, naming it.
run() {
	local out=$1 sender=$2 method=$3
	if [ "$sender" = trafgen ]; then
		trafgen_run "$out"
	else
		# shellcheck disable=SC2046 # sender_args is flags, split on purpose
		"$BIN" lab run --hosts vm --name "$NAME" --senders 1 --receivers 1 --duration "$DURATION" \
			--threads "$THREADS" $(sender_args "$sender") $(method_args "$method") \
			--json --log-level info --results-dir "$tmp/results" >"$out.json" 2>"$out.err" || true
	fi
	if ! jq -e '(.status == "ok" or .status == "partial")
		and (.flows | length == 1)
		and all(.flows[0].achieved_pps, .flows[0].pps, .flows[0].sent, .flows[0].received, .flows[0].lost; type == "number")
		and ([.lab.switch_ports[]? | select(.to == "r1")] | length == 1
			and all(.[0].tx_packets, .[0].drops; type == "number"))
		and ([.hosts[]? | select(.role == "receiver")] | length == 1 and (.[0].method_reason | type == "string"))' "$out.json" >/dev/null 2>&1; then
		die "run $sender into $method failed, or its JSON lacks status, flows[0].{achieved_pps,pps,sent,received,lost}, lab.switch_ports[to=r1].{tx_packets,drops} or the receiver's method_reason: $(jq -r '.status + ": " + (.error // "")' "$out.json" 2>/dev/null || head -c 300 "$out.json") $(tail -3 "$out.err")"
	fi
	# One "VM host ready" line per guest (the lab's log,
	# cmd/linerate/internal/lab/vmagents_linux.go), each with accel=.
	[ "$(grep -c 'VM host ready: .*accel=' "$out.err" || true)" = 2 ] ||
		die "run $sender into $method: its log has not two \"VM host ready\" lines with accel=: $(grep -m2 'VM host' "$out.err")"
	sed -nE 's/.*VM host ready: .*accel=([^ ]+).*/\1/p' "$out.err" >>"$tmp/accel"
}

# --- trafgen's row: the same lab by hand (the header says how). -------
UPPID=
# lab_exec HOST COMMAND...: a command in a guest of the lab up (lab exec).
lab_exec() { "$BIN" lab exec --name "$NAME" --log-level warn "$@"; }
# port_counts: "tx_packets_to_r1 drops" now, from the switch namespace:
# r1's port's tx packets; every port's link drops (rx and tx) and qdisc
# drops, as the lab run's switch_ports[].drops count them (its port
# programs drop nothing without --loss).
port_counts() {
	local ns=lr-$NAME-sw tx drops=0 p
	tx=$(ip -n "$ns" -s -j link show dev r1 | jq -e '.[0].stats64.tx.packets') || die "switch port r1: no tx packet count"
	for p in s1 r1; do
		drops=$((drops + $(ip -n "$ns" -s -j link show dev "$p" | jq -e '.[0].stats64 | .rx.dropped + .tx.dropped'))) ||
			die "switch port $p: no drop counts"
		drops=$((drops + $(ip netns exec "$ns" tc -s -j qdisc show dev "$p" | jq '[.[].drops // 0] | add // 0')))
	done
	echo "$tx $drops"
}
# trafgen_run OUT: trafgen s1 → r1 into r1's `linerate recv --method
# xdp`; leaves in OUT.json what a lab run's JSON holds of the fields read
# here, and lab up's log (with its "VM host ready" lines) in OUT.err.
trafgen_run() {
	local out=$1 secs=${DURATION%s} smac dmac src dst cfg t0 t1 drops tg rx sent cpu_us
	: >"$out.up" # before lab up opens it: the wait below reads it at once
	"$BIN" lab up --hosts vm --name "$NAME" --senders 1 --receivers 1 --guest-file "$(command -v trafgen)" \
		--log-level info >"$out.up" 2>"$out.err" &
	UPPID=$!
	for _ in $(seq 600); do
		grep -q "^lab $NAME up" "$out.up" && break
		kill -0 "$UPPID" 2>/dev/null || die "trafgen: lab up failed: $(tail -3 "$out.err")"
		sleep 0.5
	done
	grep -q "^lab $NAME up" "$out.up" || die "trafgen: lab up not up within 5 minutes: $(tail -3 "$out.err")"
	smac=$(lab_exec s1 cat /sys/class/net/data0/address) && dmac=$(lab_exec r1 cat /sys/class/net/data0/address) &&
		src=$(lab_exec s1 ip -4 -o addr show dev data0 | awk '{sub("/.*", "", $4); print $4}') &&
		dst=$(lab_exec r1 ip -4 -o addr show dev data0 | awk '{sub("/.*", "", $4); print $4}') ||
		die "trafgen: read the guests' data0 addresses"
	# 60 bytes (64 with FCS): IPv4/UDP src:9 -> dst:9, no UDP checksum,
	# pktgen's header (magic, sequence 1, zero timestamp), 2 bytes of
	# padding: bench/generators.sh's frame between the guests' data0.
	cfg="{ $(echo "$dmac" | sed 's/^/0x/; s/:/, 0x/g'), $(echo "$smac" | sed 's/^/0x/; s/:/, 0x/g'), 0x08, 0x00,"
	cfg+=" 0x45, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x00, 0x00, 0x20, 0x11, csumip(14, 33), ${src//./, }, ${dst//./, },"
	cfg+=" 0x00, 0x09, 0x00, 0x09, 0x00, 0x1a, 0x00, 0x00,"
	cfg+=" const32(0xbe9be955), const32(1), const32(0), const32(0), fill(0x00, 2) }"
	lab_exec r1 "/bin/linerate recv --iface data0 --method xdp --json >/tmp/tg.json 2>/tmp/tg.err & echo \$! >/tmp/tg.pid" >/dev/null ||
		die "trafgen: start the receiver in r1"
	for _ in $(seq 120); do
		lab_exec r1 grep -q "'armed: counting'" /tmp/tg.err 2>/dev/null && break
		sleep 0.5
	done
	lab_exec r1 grep -q "'armed: counting'" /tmp/tg.err 2>/dev/null || die "trafgen: r1's receiver did not arm: $(lab_exec r1 cat /tmp/tg.err | tail -3)"
	read -r t0 _ < <(port_counts)
	# trafgen forks a process per CPU: SIGINT to its process group (its
	# own session, setsid) after DURATION stops them all, as Ctrl-C
	# would (busybox's timeout signals one pid), and it prints its counts
	# (its exit status then is not a verdict: the counts are checked
	# below); SIGKILL 10 s later if it hangs, and no counts.
	tg=$(lab_exec s1 "setsid trafgen --dev data0 --cpus $THREADS -Q '$cfg' >/tmp/tg.out 2>&1 & p=\$!;" \
		"sleep $secs; kill -INT -\$p; (sleep 10; kill -KILL -\$p 2>/dev/null) & wait \$p; echo trafgen-exit=\$?; cat /tmp/tg.out") ||
		die "trafgen in s1: $tg"
	echo "$tg" >"$out.trafgen"
	sleep 1 # the lab run's drain
	rx=$(lab_exec r1 'kill -TERM $(cat /tmp/tg.pid); while kill -0 $(cat /tmp/tg.pid) 2>/dev/null; do sleep 0.1; done; cat /tmp/tg.json') ||
		die "trafgen: stop r1's receiver: $rx"
	read -r t1 drops < <(port_counts)
	kill -INT "$UPPID" && wait "$UPPID" || true
	UPPID=
	sent=$(tr -d '\r' <"$out.trafgen" | awk '/packets outgoing/ {print $1; f = 1; exit} END {if (!f) exit 1}') ||
		die "trafgen in s1: no 'packets outgoing' line: $(tail -5 "$out.trafgen")"
	# Its send time: the longest of its processes' ("S sec, U usec on CPUn").
	cpu_us=$(tr -d '\r' <"$out.trafgen" | awk '/ sec, .* usec on CPU/ {t = $1 * 1000000 + $3; if (t > m) m = t; f = 1} END {if (!f || !m) exit 1; print m}') ||
		die "trafgen in s1: no CPU time lines: $(tail -5 "$out.trafgen")"
	echo "$rx" | jq -e --argjson sent "$sent" --argjson us "$cpu_us" --argjson tx "$((t1 - t0))" --argjson drops "$drops" '
		(.streams | map(.received) | add // 0) as $rcv
		| {status: "ok",
		   flows: [{sent: $sent, received: $rcv, lost: ([$sent - $rcv, 0] | max),
		            achieved_pps: ($sent * 1e6 / $us), pps: ($rcv * 1e6 / $us), stream_detail: .streams}],
		   lab: {switch_ports: [{to: "r1", tx_packets: $tx, drops: $drops}]},
		   hosts: [{role: "receiver", method_reason: ("linerate recv --method xdp in r1 (lab exec): " + .method + ", " + .method_reason)}]}' \
		>"$out.json" || die "trafgen: r1's receiver printed no report: $(echo "$rx" | tail -5)"
}

echo "VM-host lab engines benchmark: $(date -u +%FT%TZ)"
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), host kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "lab run --hosts vm --senders 1 --receivers 1, 64 B, unpaced, $DURATION, --threads $THREADS, $ROUNDS rounds, alternating"

if [ ${#S[@]} -gt 0 ]; then
	echo
	echo "1. senders into --method xdp (sent: the sender's achieved pps; received: the flow's pps)"
	printf '   %-6s %-10s %8s %12s %12s %10s %12s %10s %12s\n' round sender streams sent_pps received_pps sent switch_in lost switch_drops
	for r in $(seq 1 "$ROUNDS"); do
		order=("${S[@]}")
		((r % 2)) || mapfile -t order < <(printf '%s\n' "${S[@]}" | tac)
		for k in "${order[@]}"; do
			out=$tmp/s.$k.$r
			run "$out" "$k" xdp
			jq -r --arg r "$r" --arg k "$k" '
				(.flows[0]) as $f
				| [$r, $k, ($f.stream_detail | length), ($f.achieved_pps | floor), ($f.pps | floor), $f.sent,
				   ([.lab.switch_ports[] | select(.name == "s1") | .test_packets] | add), $f.lost,
				   ([.lab.switch_ports[].drops] | add)] | @tsv' "$out.json" |
				awk -F'\t' '{printf "   %-6s %-10s %8s %12s %12s %10s %12s %10s %12s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
			jq '.flows[0].achieved_pps' "$out.json" >>"$tmp/sent.$k"
			[ "$r" != 1 ] || echo "   $k: $(jq -r '[.hosts[] | select(.role == "sender") | .backend_notes // [] | .[]] | join("; ") | if . == "" then "(none)" else . end' "$out.json")" >>"$tmp/snotes"
			jq '.flows[0].pps' "$out.json" >>"$tmp/recv.$k"
		done
	done
	echo
	printf '   %-10s %14s %14s\n' sender median_sent median_received
	for k in "${S[@]}"; do
		printf '   %-10s %14.0f %14.0f\n' "$k" "$(median <"$tmp/sent.$k")" "$(median <"$tmp/recv.$k")"
		echo "$(median <"$tmp/sent.$k") $k" >>"$tmp/fastest"
	done
	# ratio A B: the ratios of A's medians to B's, when both ran.
	ratio() {
		[ -s "$tmp/sent.$1" ] && [ -s "$tmp/sent.$2" ] || return 0
		awk -v a="$(median <"$tmp/sent.$1")" -v b="$(median <"$tmp/sent.$2")" \
			-v ar="$(median <"$tmp/recv.$1")" -v br="$(median <"$tmp/recv.$2")" -v n="$1/$2" \
			'BEGIN {printf "   %-22s sent %.2f, received %.2f\n", n, a / b, ar / br}'
	}
	echo
	echo "   what each sender's backend noted (round 1):"
	cat "$tmp/snotes"
	echo
	echo "   ratios of medians:"
	for ref in xdp afpacket kernel trafgen; do ratio afxdp-off "$ref"; done
	ratio afxdp-on trafgen
	ratio afpacket trafgen
	ratio kernel trafgen
	ratio afxdp-on afxdp-off
	# The fastest sender without a need_wakeup policy of its own (an
	# afxdp one would impose it on the afxdp receivers), else any.
	[ -n "$FASTEST" ] || FASTEST=$({ grep -v -e ' afxdp-o' -e ' trafgen' "$tmp/fastest" || true; } | sort -g | tail -1 | cut -d' ' -f2)
	[ -n "$FASTEST" ] || FASTEST=$({ grep -v ' trafgen' "$tmp/fastest" || true; } | sort -g | tail -1 | cut -d' ' -f2)
	check_wakeup
fi

if [ ${#R[@]} -gt 0 ]; then
	[ -n "$FASTEST" ] || die "no sender for part 2: trafgen cannot be FASTEST (part 2's runs are lab runs); name another in SENDERS or FASTEST"
	echo
	echo "2. receivers, sender $FASTEST (counted: the flow's received; delivered: the switch port toward r1, tx_packets; switch_drops: that port's drops)"
	printf '   %-6s %-9s %12s %10s %10s %12s %9s\n' round receiver sent_pps delivered counted switch_drops counted%
	for r in $(seq 1 "$ROUNDS"); do
		order=("${R[@]}")
		((r % 2)) || mapfile -t order < <(printf '%s\n' "${R[@]}" | tac)
		for m in "${order[@]}"; do
			out=$tmp/r.$m.$r
			run "$out" "$FASTEST" "$m"
			read -r pps delivered counted drops < <(jq -r '
				([.lab.switch_ports[] | select(.to == "r1")][0]) as $p
				| [(.flows[0].achieved_pps | floor), $p.tx_packets, .flows[0].received, $p.drops] | @tsv' "$out.json")
			pct=$(awk -v c="$counted" -v d="$delivered" 'BEGIN {printf "%.3f", d ? 100 * c / d : 0}')
			printf '   %-6s %-9s %12s %10s %10s %12s %9s\n' "$r" "$m" "$pps" "$delivered" "$counted" "$drops" "$pct"
			echo "$pct" >>"$tmp/pct.$m"
			echo "$pps" >>"$tmp/rpps.$m"
			[ "$r" != 1 ] || echo "   $m: $(jq -r '.hosts[] | select(.role == "receiver") | .method_reason' "$out.json")" >>"$tmp/reasons"
		done
	done
	echo
	printf '   %-9s %14s %13s\n' receiver median_sent min_counted%
	for m in "${R[@]}"; do
		printf '   %-9s %14.0f %13s\n' "$m" "$(median <"$tmp/rpps.$m")" "$(sort -g "$tmp/pct.$m" | head -1)"
	done
	echo
	echo "   what each receiver chose (round 1):"
	cat "$tmp/reasons"
fi
echo
echo "accelerator of every guest of every run: $(sort -u "$tmp/accel" | paste -sd' ') (the lab's \"VM host ready\" log lines)"
