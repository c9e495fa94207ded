#!/usr/bin/env bash
# Benchmark (run by hand as root: `make bench-generators`): linerate's
# userspace generators (xdp, afxdp and afpacket backends) against netsniff-ng
# trafgen, xdp-trafficgen (xdp-tools) and iperf3, like for like: one veth
# pair (two queues each end) between two namespaces the script creates,
# 64-byte frames, one sender thread on CPU 0, all tools in the same run,
# alternating, ROUNDS rounds, medians. Not a pass/fail test: figures only.
#
# The afxdp backend runs four ways: afxdp (one socket on queue 0, CPU 0,
# need_wakeup off, the auto choice on a veth), afxdp-wake (the same with
# need_wakeup on), and afxdp2 and afxdp2-wake (two threads, CPUs 0 and 1,
# one socket on each of the two queues): the two-thread runs are the one
# exception to one sender thread, for the ratio of two threads to one.
#
# Sinks (every tool that can goes into both, in the same run):
#   hdr   `linerate recv --method xdp` on the peer. It counts and XDP-drops
#         frames carrying pktgen's header and passes all others to the
#         stack (whose work, on a veth, runs on the sending CPU). So trafgen
#         sends frames with pktgen's header (magic 0xbe9be955, sequence,
#         tv_sec, tv_usec, big-endian at UDP payload offset 0); trafgen has
#         no runtime 32-bit counter that reaches that offset, so its
#         sequence is a constant 1 (the receiver counts the repeats as
#         duplicates, on the same XDP path: fetch-or into the bitmap, then a
#         per-CPU add). iperf3 cannot send the header (its payload starts
#         with its own), nor can xdp-trafficgen (IPv6, zero payload): iperf3
#         runs here as a reference only, its frames going to the stack and
#         counted by its server, and is marked so; xdp-trafficgen does not
#         run in this sink.
#   drop  `xdp-bench drop` (xdp-tools; $XDP_BENCH) on the peer: one plain
#         XDP program that drops every frame, the neutral sink. iperf3
#         cannot run here (its TCP control connection would be dropped too).
#
# Timing, the same for every tool: a fixed packet count per run, whole
# process wall time (fork/exec, set-up, sending, tear-down), and start-up
# taken out of the window for every tool alike: each timed run is preceded,
# in the same round and sink, by a run of the same command sending 1 packet
# (one per thread: 2 for afxdp2*), and pps = (N - 1) / (wall(N) - wall(1)). The whole-process rate N / wall(N)
# (start-up inside for all) is printed too, with the start-up itself. N is
# $COUNT for every tool when set, else sized per tool from a warm-up run (of
# 10^6 packets, repeated with about a second's worth when that was shorter)
# so that each timed run lasts about $SECS s.
#
# A run is "exact" only when the receiver counted exactly the N packets the
# sender was told to send and the sender's own count (where it reports one:
# linerate, trafgen, iperf3) is N too; for linerate in the hdr sink also one
# stream with no missing sequence and no duplicate.
#
# Environment: ROUNDS (3), SECS (4), COUNT (unset), WARM (the first warm-up's
# packets, 1000000), LINERATE (./bin/linerate), XDP_TRAFFICGEN, XDP_BENCH
# (paths to xdp-tools' binaries; Debian's xdp-tools 1.3.1 does not load on
# recent kernels, a current build does; each absent tool is skipped with a
# note), TOOLS (default "xdp afxdp afxdp-wake afxdp2 afxdp2-wake afpacket
# trafgen xdp-trafficgen iperf3").
# `make bench-smoke` runs it small (ROUNDS=1 SECS=1 WARM=100000): every tool,
# sink and parse, about a second a run.
#
# xdp is probed first, one packet into the hdr sink: a kernel that refuses
# BPF_PROG_RUN's live-frame mode with EPERM even to root (this CI machine,
# 6.18.44-fc: the environment's refusal, bench/xdp-refused.sh) leaves xdp
# out, said in one line; its medians and ratios print as "not run". Any
# other failure of the probe ends the bench.
#
# Exit status: non-zero when a command fails (a tool's run, a sink that does
# not arm or stop cleanly) or an output lacks a field the script reads;
# the table is printed first. A run that is not exact is a figure, not a
# failure.
set -euo pipefail
shopt -s inherit_errexit
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-4}
COUNT=${COUNT:-}
WARM=${WARM:-1000000}
BIN=${LINERATE:-./bin/linerate}
XT=${XDP_TRAFFICGEN:-}
XB=${XDP_BENCH:-}
TOOLS=${TOOLS:-xdp afxdp afxdp-wake afxdp2 afxdp2-wake afpacket trafgen xdp-trafficgen iperf3}

[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces, XDP)" >&2; exit 1; }
for t in trafgen jq; do command -v $t >/dev/null || { echo "bench: $t missing (make bench-generators installs it)" >&2; exit 1; }; done
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable linerate (set LINERATE=)" >&2; exit 1; }
for v in ROUNDS SECS WARM ${COUNT:+COUNT}; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive whole number" >&2; exit 1; }
done
. "$(dirname "$0")/xdp-refused.sh"
note() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

has_tool() { case " $TOOLS " in *" $1 "*) return 0;; *) return 1;; esac; }
for t in $TOOLS; do
	case $t in xdp|afxdp|afxdp-wake|afxdp2|afxdp2-wake|afpacket|trafgen|xdp-trafficgen|iperf3) ;;
	*) die "TOOLS: $t is not a tool here (xdp afxdp afxdp-wake afxdp2 afxdp2-wake afpacket trafgen xdp-trafficgen iperf3)";; esac
done
if has_tool iperf3 && ! command -v iperf3 >/dev/null; then note "iperf3 not installed: skipped"; TOOLS=${TOOLS/iperf3/}; fi
if has_tool xdp-trafficgen && { [ -z "$XT" ] || [ ! -x "$XT" ]; }; then
	note "XDP_TRAFFICGEN not set to an executable xdp-trafficgen: xdp-trafficgen skipped"; TOOLS=${TOOLS/xdp-trafficgen/}; fi
SINKS="hdr drop"
if [ -z "$XB" ] || [ ! -x "$XB" ]; then
	note "XDP_BENCH not set to an executable xdp-bench: the neutral sink (xdp-bench drop) is skipped, and with it xdp-trafficgen"
	SINKS=hdr; TOOLS=${TOOLS/xdp-trafficgen/}
fi
TOOLS=$(echo $TOOLS)

# Names of this run only: namespaces with the PID, files in a mktemp dir.
A=lrbench-$$-a B=lrbench-$$-b  # not lr-…: those are labs (lab down --all removes them)
TMP=$(mktemp -d /tmp/lr-gen.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	ip netns del $A 2>/dev/null || true
	ip netns del $B 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
forget() { local keep=() p; for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; PIDS=("${keep[@]}"); }

# Test traffic only on the veth pair created here, addresses from 198.18.0.0/15.
ip netns add $A; ip netns add $B
# Two queues each end: the two-thread afxdp runs bind one socket to each.
ip -n $A link add va numtxqueues 2 numrxqueues 2 type veth peer name vb netns $B numtxqueues 2 numrxqueues 2
for ns in $A $B; do ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1; ip -n $ns link set lo up; done
ip -n $A addr add 198.18.0.1/24 dev va; ip -n $B addr add 198.18.0.2/24 dev vb
ip -n $A link set va up; ip -n $B link set vb up
MAC=$(ip netns exec $B cat /sys/class/net/vb/address)
ip -n $A neigh replace 198.18.0.2 lladdr "$MAC" dev va nud permanent
sleep 1

# trafgen: 60-byte frame (64 with FCS), IPv4/UDP 198.18.0.1:9 -> 198.18.0.2:9,
# no UDP checksum (as linerate by default), payload = pktgen's header
# (sequence 1, zero timestamp) and 2 bytes of padding.
cat > "$TMP/trafgen.cfg" <<CFG
{ $(echo "$MAC" | sed 's/^/0x/; s/:/, 0x/g'), 0x02,0x00,0x00,0x00,0x00,0x01, 0x08,0x00,
  0x45,0x00,0x00,0x2e, 0x00,0x00,0x00,0x00, 0x20,0x11,csumip(14, 33), 198,18,0,1, 198,18,0,2,
  0x00,0x09,0x00,0x09,0x00,0x1a,0x00,0x00,
  const32(0xbe9be955), const32(1), const32(0), const32(0), fill(0x00, 2) }
CFG

now_us() { echo "${EPOCHREALTIME/./}"; }

# --- sinks: sink_start SINK; sink_stop SINK; the count is read by recv_count.
# A sink that does not arm, or (hdr) does not stop cleanly, ends the bench.
sink_start() {
	local ready
	: > "$TMP/sink.out"; : > "$TMP/sink.err"
	case $1 in
	hdr)
		# The receiver's default window (receiver.DefaultWindow sequences)
		# holds one in-order stream of any length; trafgen's constant
		# sequence is a duplicate of the first.
		ip netns exec $B "$BIN" recv --iface vb --method xdp --duration 600s --json \
			> "$TMP/sink.out" 2> "$TMP/sink.err" &
		ready="armed: counting" ;;
	drop)
		ip netns exec $B "$XB" drop vb > "$TMP/sink.out" 2> "$TMP/sink.err" &
		ready="^Dropping packets on" ;;
	esac
	SPID=$!; PIDS+=("$SPID")
	for _ in $(seq 100); do
		grep -q "$ready" "$TMP/sink.err" && return 0
		kill -0 $SPID 2>/dev/null || break
		sleep 0.1
	done
	die "sink $1 did not arm: $(tail -5 "$TMP/sink.err")"
}
sink_stop() { # SINK: settle, stop, wait
	local rc=0
	sleep 0.3
	kill -INT $SPID 2>/dev/null || true
	wait $SPID 2>/dev/null || rc=$?
	forget $SPID
	# linerate recv exits 0 on SIGINT after printing its report;
	# xdp-bench's status is not documented: its count is checked instead.
	[ "$1" != hdr ] || [ $rc = 0 ] || die "sink hdr (linerate recv) exited with status $rc: $(tail -5 "$TMP/sink.err")"
}

# --- senders: send TOOL N -> runs the tool once for N packets, in $A;
# leaves its output in $TMP/send.out and .err, its exit code in $TMP/rc.
send() {
	local tool=$1 n=$2 rc=0 ipid
	case $tool in
	xdp|afpacket)
		ip netns exec $A "$BIN" send --iface va --dst 198.18.0.2 --src 198.18.1.1 --dst-mac "$MAC" --count "$n" \
			--cpus 0 --backend $tool --json --log-level error > "$TMP/send.out" 2> "$TMP/send.err" || rc=$? ;;
	afxdp*)
		local cpus=0 wake=off
		case $tool in afxdp2*) cpus=0-1;; esac
		case $tool in *-wake) wake=on;; esac
		ip netns exec $A "$BIN" send --iface va --dst 198.18.0.2 --src 198.18.1.1 --dst-mac "$MAC" --count "$n" \
			--cpus $cpus --backend afxdp --need-wakeup $wake --json --log-level error > "$TMP/send.out" 2> "$TMP/send.err" || rc=$? ;;
	trafgen)
		ip netns exec $A trafgen --dev va --conf "$TMP/trafgen.cfg" --cpus 1 -n "$n" \
			> "$TMP/send.out" 2> "$TMP/send.err" || rc=$? ;;
	xdp-trafficgen)
		# It ends with SIGINT to itself once the count is sent (exit code 1
		# even then); it reports rates only, so its count is not checked. Its
		# UDP mode is IPv6 only: 62-byte frames (66 with FCS), the smallest.
		ip netns exec $A "$XT" udp -n "$n" -t 1 -m "$MAC" -s 64 va > "$TMP/send.out" 2> "$TMP/send.err" || rc=$?
		[ $rc = 1 ] && rc=0 ;;
	iperf3)
		ip netns exec $B iperf3 -s -1 -B 198.18.0.2 > /dev/null 2>&1 & ipid=$!; PIDS+=("$ipid")
		for _ in $(seq 50); do ip netns exec $B ss -ltn 2>/dev/null | grep -q ':5201 ' && break; sleep 0.1; done
		SEND_T0=$(now_us)   # the server is not the sender: its start-up stays outside
		ip netns exec $A taskset -c 0 iperf3 -c 198.18.0.2 -u -l 18 -b 0 -k "$n" --json \
			> "$TMP/send.out" 2> "$TMP/send.err" || rc=$?
		SEND_T1=$(now_us)
		[ $rc = 0 ] || kill $ipid 2>/dev/null || true  # a client that never connected leaves the server waiting
		wait $ipid 2>/dev/null || true; forget $ipid ;;
	esac
	echo $rc > "$TMP/rc"
}
timed_send() { # TOOL N -> sets WALL_US
	SEND_T0=$(now_us); SEND_T1=
	send "$1" "$2"
	[ -n "$SEND_T1" ] || SEND_T1=$(now_us)
	WALL_US=$(( SEND_T1 - SEND_T0 ))
}

# jqnum FILE FILTER WHAT -> the number FILTER yields on FILE, or the bench
# ends naming WHAT is missing (a renamed flag or JSON key fails here, not
# as a quiet "-" in the table).
jqnum() {
	jq -er "$2 | numbers" "$1" 2>/dev/null ||
		die "$3: not found (jq '$2' on $(basename "$1")): $(head -c 400 "$1")"
}

# sent_count TOOL -> the sender's own count of its last run, or - for a
# tool that reports none (xdp-trafficgen).
sent_count() {
	case $1 in
	xdp|afpacket|afxdp*) jqnum "$TMP/send.out" '.packets' "linerate send --json: packets" ;;
	trafgen)
		awk '/packets outgoing/ { gsub(/\r/, ""); print $1; f = 1; exit } END { if (!f) exit 1 }' \
			"$TMP/send.out" "$TMP/send.err" || die "trafgen: no 'packets outgoing' line: $(tail -5 "$TMP/send.err")" ;;
	xdp-trafficgen) echo - ;;
	iperf3) jqnum "$TMP/send.out" '.end.sum.packets' "iperf3 --json: end.sum.packets" ;;
	esac
}

# recv_count SINK TOOL -> what the sink counted of the last run (after sink_stop)
recv_count() {
	case $1/$2 in
	hdr/iperf3) jqnum "$TMP/send.out" '.end.sum | .packets - .lost_packets' "iperf3 --json: end.sum.packets and lost_packets" ;;
	hdr/*) jqnum "$TMP/sink.out" '.streams | if type == "array" and all(.[]; .received | type == "number") then map(.received) | add // 0 else null end' \
		"linerate recv --json: streams[].received" ;;
	drop/*) awk '/Packets received/ { print $4; f = 1; exit } END { if (!f) exit 1 }' "$TMP/sink.out" ||
		die "xdp-bench drop: no 'Packets received' line: $(tail -5 "$TMP/sink.out")" ;;
	esac
}

# check SINK TOOL N RECEIVED SENT -> sets RUN_CHK
check() {
	local sink=$1 tool=$2 n=$3 got=$4 sent=$5 streams want=1
	if [ "$sent" != - ] && [ "$sent" != "$n" ]; then RUN_CHK="NOT-EXACT(sent $sent of $n)"; return; fi
	if [ "$got" != "$n" ]; then RUN_CHK="NOT-EXACT(received $got of $n)"; return; fi
	RUN_CHK=exact
	[ $sink = hdr ] || return 0
	case $tool in afxdp2*) want=2;; esac
	case $tool in
	xdp|afpacket|afxdp*)
		streams=$(jqnum "$TMP/sink.out" '.streams | if all(.[]; (.missing | type) == "number" and (.duplicates | type) == "number")
			then map(select(.missing == 0 and .duplicates == 0)) | length else null end' \
			"linerate recv --json: streams[].missing and duplicates")
		[ "$streams" = $want ] && [ "$(jq '.streams | length' "$TMP/sink.out")" = $want ] ||
			RUN_CHK="NOT-EXACT(streams/missing/duplicates)" ;;
	iperf3) RUN_CHK="exact(stack,ref)" ;;
	esac
}

# one measured run: a 1-packet run, then the N-packet run, each into a fresh
# sink; sets RUN_PPS RUN_WHOLE RUN_ST RUN_WALL RUN_CHK (in this shell, so
# that the trap knows every process started). A tool that exits non-zero
# is FAILED in the table and in FAILED, which fails the bench at the end.
FAILED=()
run() { # SINK TOOL N
	local sink=$1 tool=$2 n=$3 w1 rc1 rc got sent one=1
	# the start-up run sends one packet per thread (afxdp2*: two threads)
	case $tool in afxdp2*) one=2;; esac
	sink_start $sink; timed_send $tool $one; sink_stop $sink; w1=$WALL_US
	rc1=$(<"$TMP/rc")
	sink_start $sink; timed_send $tool "$n"; sink_stop $sink
	rc=$(<"$TMP/rc")
	RUN_ST=$(( w1 / 1000 )) RUN_WALL=$(( WALL_US / 1000 ))
	RUN_WHOLE=$(( n * 1000000 / WALL_US ))
	RUN_PPS=0; [ "$WALL_US" -le "$w1" ] || RUN_PPS=$(( (n - one) * 1000000 / (WALL_US - w1) ))
	if [ "$rc1" != 0 ] || [ "$rc" != 0 ]; then
		RUN_CHK="FAILED(rc $rc1 for $one packet(s), $rc for $n)"
		FAILED+=("$sink $tool: $RUN_CHK: $(tail -3 "$TMP/send.err" | tr '\n' ' ')")
		return
	fi
	sent=$(sent_count $tool)
	got=$(recv_count $sink $tool)
	check $sink $tool "$n" "$got" "$sent"
}

tools_for() { # SINK -> the tools that run there
	local t out=
	for t in $TOOLS; do
		case $1/$t in hdr/xdp-trafficgen|drop/iperf3) ;; *) out+="$t ";; esac
	done
	echo $out
}

# xdp once, one packet into the hdr sink, before anything is measured: a
# kernel that refuses its live frames (xdp_refused) leaves it out; any
# other failure ends the bench.
XDP_NOTRUN=
if has_tool xdp; then
	sink_start hdr; send xdp 1; sink_stop hdr
	if [ "$(<"$TMP/rc")" != 0 ]; then
		xdp_refused "$TMP/send.err" || die "xdp, the one-packet probe: $(tail -3 "$TMP/send.err")"
		XDP_NOTRUN=$XDP_REFUSAL
		TOOLS=$(for t in $TOOLS; do [ "$t" = xdp ] || printf '%s ' "$t"; done)
		TOOLS=$(echo $TOOLS)
	fi
fi

echo "linerate generators benchmark: $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, veth $A/va -> $B/vb"
[ -z "$XDP_NOTRUN" ] || echo "$XDP_NOTRUN: its runs, medians and ratios are not run"
echo "sinks: $SINKS; tools: $TOOLS; rounds $ROUNDS; 64-byte frames; one sender thread on CPU 0 (afxdp2*: two, CPUs 0 and 1, queues 0 and 1)"
has_tool iperf3 && echo "note: iperf3 cannot carry pktgen's header: in sink hdr its frames go to the stack (reference only); not run in sink drop"
has_tool xdp-trafficgen && echo "note: xdp-trafficgen cannot carry pktgen's header: sink drop only"

# counts per tool: $COUNT, or sized from a warm-up run in the first sink it runs in
declare -A N
for tool in $TOOLS; do
	if [ -n "$COUNT" ]; then N[$tool]=$COUNT; continue; fi
	for sink in $SINKS; do case " $(tools_for $sink) " in *" $tool "*) break;; esac; done
	# a second warm-up when the first sent for under a second: start-up
	# noise would dominate the estimate of a fast tool
	w=$WARM
	for _ in 1 2; do
		run $sink $tool $w
		pps=$RUN_PPS; [ "$pps" -gt 0 ] || pps=$RUN_WHOLE; [ "$pps" -gt 0 ] || pps=1
		[ $(( w * 1000 / pps )) -lt 1000 ] && [ $w -lt $pps ] || break
		w=$pps
	done
	N[$tool]=$(( (pps * SECS + 50000) / 100000 * 100000 ))
	[ "${N[$tool]}" -ge 100000 ] || N[$tool]=100000
	echo "warm-up  $sink  $(printf '%-15s' $tool) $pps pps ($RUN_CHK) -> ${N[$tool]} packets per run"
done
echo
printf '%-6s %-5s %-15s %10s %12s %12s %9s %9s  %s\n' round sink tool packets pps whole-pps start-ms wall-ms check
declare -A R
for i in $(seq 1 "$ROUNDS"); do
	for sink in $SINKS; do
		for tool in $(tools_for $sink); do
			run $sink $tool "${N[$tool]}"
			printf '%-6s %-5s %-15s %10d %12d %12d %9s %9s  %s\n' $i $sink $tool "${N[$tool]}" \
				$RUN_PPS $RUN_WHOLE $RUN_ST $RUN_WALL "$RUN_CHK"
			R[$sink/$tool]+="$RUN_PPS "
			R[$sink/$tool/whole]+="$RUN_WHOLE "
		done
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%d\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
echo "medians over $ROUNDS rounds (pps: start-up outside the window; whole: start-up inside)"
declare -A M W
for sink in $SINKS; do
	for tool in $(tools_for $sink); do
		M[$sink/$tool]=$(echo "${R[$sink/$tool]}" | median)
		W[$sink/$tool]=$(echo "${R[$sink/$tool/whole]}" | median)
		printf '%-5s %-15s %12d pps %12d whole-pps\n' $sink $tool "${M[$sink/$tool]}" "${W[$sink/$tool]}"
	done
	[ -z "$XDP_NOTRUN" ] || printf '%-5s %-15s %16s\n' $sink xdp "not run"
done
echo
ratio() { # SINK NUM DEN LABEL TARGET
	local a=${M[$1/$2]:-} b=${M[$1/$3]:-} wa=${W[$1/$2]:-} wb=${W[$1/$3]:-} other
	# xdp refused by this kernel: its ratio (where the other tool ran) is
	# "not run", never a figure.
	if [ -n "$XDP_NOTRUN" ] && { [ "$2" = xdp ] || [ "$3" = xdp ]; }; then
		other=$3; [ "$3" != xdp ] || other=$2
		[ -n "${M[$1/$other]:-}" ] || return 0
		printf 'ratio %-5s %-22s %6s  (xdp: not run on this machine)%s\n' "$1" "$4" "not run" "$5"
		return 0
	fi
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt 0 ] && [ "${wb:-0}" -gt 0 ] || return 0
	awk -v a="$a" -v b="$b" -v wa="$wa" -v wb="$wb" -v s="$1" -v l="$4" -v t="$5" \
		'BEGIN { printf "ratio %-5s %-22s %6.2f  (whole-process %5.2f)%s\n", s, l, a / b, wa / wb, t }'
}
for sink in $SINKS; do
	ratio $sink xdp trafgen xdp/trafgen "  target >= 10"
	ratio $sink afpacket trafgen afpacket/trafgen "  target >= 1.0"
	ratio $sink afxdp trafgen afxdp/trafgen "  target >= 1.5"
	ratio $sink afxdp-wake afxdp "afxdp need_wakeup on/off" ""
	ratio $sink afxdp2 afxdp "afxdp 2 threads/1" "  target >= 1.8 where the machine allows"
	ratio $sink afxdp2-wake afxdp-wake "afxdp-wake 2 threads/1" ""
	ratio $sink xdp xdp-trafficgen xdp/xdp-trafficgen "  target >= 1.0"
	ratio $sink trafgen iperf3 "trafgen/iperf3(ref)" ""
done
if [ ${#FAILED[@]} -gt 0 ]; then
	printf 'bench: a run failed: %s\n' "${FAILED[@]}" >&2
	exit 1
fi
