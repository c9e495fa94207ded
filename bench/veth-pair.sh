# Sourced by the bench scripts that send over one veth pair
# (latency-cost.sh, afxdp-receiver.sh): veth_pair TAG makes two namespaces
# TAG-a and TAG-b joined by va (198.18.0.1/24) and vb (198.18.0.2/24), sets
# nsA, nsB, mac (vb's address) and tmp (a scratch directory), and removes
# all of it, and a receiver left running ($recv_pid), when the script
# exits. pick_sender chooses the sender's backend (xdp, the fastest on a
# veth, unless this kernel refuses its live frames: then afxdp, else
# afpacket). Test traffic only on this pair, addresses from 198.18.0.0/15.
. "$(dirname "${BASH_SOURCE[0]}")/xdp-refused.sh"
SENDER=xdp
veth_pair() {
	nsA=$1-a nsB=$1-b
	tmp=$(mktemp -d)
	recv_pid=
	trap veth_cleanup EXIT
	trap 'exit 130' INT TERM
	ip netns add "$nsA"
	ip netns add "$nsB"
	ip -n "$nsA" link add va type veth peer name vb netns "$nsB"
	ip -n "$nsA" addr add 198.18.0.1/24 dev va
	ip -n "$nsB" addr add 198.18.0.2/24 dev vb
	for ns in "$nsA" "$nsB"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$nsA" link set va up
	ip -n "$nsB" link set vb up
	mac=$(ip -n "$nsB" -j link show vb | jq -r '.[0].address')
}

veth_cleanup() {
	[ -z "$recv_pid" ] || kill "$recv_pid" 2>/dev/null || true
	ip netns del "$nsA" 2>/dev/null || true
	ip netns del "$nsB" 2>/dev/null || true
	rm -rf "$tmp"
}

# recv_armed ERRFILE WHAT: waits up to 10 s for the receiver $recv_pid to
# log that it counts (in ERRFILE); fails naming WHAT when it does not.
recv_armed() {
	for _ in $(seq 1 100); do
		grep -q "armed: counting" "$1" 2>/dev/null && return 0
		kill -0 "$recv_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "armed: counting" "$1" || { echo "bench: $2 did not arm: $(tail -3 "$1")" >&2; return 1; }
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# pick_sender: sets SENDER, the backend send_into sends with: xdp (the
# fastest sender on a veth, docs/benchmarks.md) when this kernel runs it;
# when the kernel refuses BPF_PROG_RUN's live-frame mode (xdp_refused),
# the next fastest that runs here, afxdp, else afpacket, and SENDER_WHY
# says which and why (one line per backend passed over). Each is probed
# with one packet from va into `recv --method xdp` on vb (with an XDP
# program on the peer a veth transmits XDP frames). Any other failure of
# the xdp probe, an afxdp failure other than "not supported by this
# backend", or an afpacket failure fails the script.
pick_sender() {
	local b out rc
	SENDER= SENDER_WHY=
	for b in xdp afxdp afpacket; do
		out=$tmp/probe.$b
		ip netns exec "$nsB" "$BIN" recv --iface vb --method xdp --duration 60s --json >"$out.recv" 2>"$out.recv.err" &
		recv_pid=$!
		recv_armed "$out.recv.err" "recv (probe of the $b sender)"
		rc=0
		ip netns exec "$nsA" "$BIN" send --iface va --dst 198.18.0.2 --src 198.18.0.1 --dst-mac "$mac" --backend "$b" --cpus 0 \
			--count 1 --json --log-level warn >"$out.send" 2>"$out.send.err" || rc=$?
		sleep 0.2
		kill -INT "$recv_pid" 2>/dev/null || true
		wait "$recv_pid" || { echo "bench: recv (probe of the $b sender): $(tail -3 "$out.recv.err")" >&2; recv_pid=; return 1; }
		recv_pid=
		if [ "$rc" = 0 ]; then
			SENDER=$b
			return 0
		fi
		case $b in
		xdp)
			xdp_refused "$out.send.err" || { echo "bench: send --backend xdp (the one-packet probe): $(tail -3 "$out.send.err")" >&2; return 1; }
			SENDER_WHY=$XDP_REFUSAL ;;
		afxdp)
			grep -q 'not supported by this backend' "$out.send.err" || { echo "bench: send --backend afxdp (the one-packet probe): $(tail -3 "$out.send.err")" >&2; return 1; }
			SENDER_WHY+=$'\n'"afxdp: cannot send on va here: $(tail -1 "$out.send.err")" ;;
		afpacket)
			echo "bench: send --backend afpacket (the one-packet probe): $(tail -3 "$out.send.err")" >&2; return 1 ;;
		esac
	done
}

# send_into OUT WHAT [ARG...]: sends $COUNT 64-byte frames with the
# $SENDER backend (one thread on CPU 0, ARGs added) from va to the receiver
# $recv_pid on vb, waits for that receiver to end and checks that the
# sender's JSON ($OUT.send) has its pps; fails naming WHAT.
send_into() {
	local out=$1 what=$2
	shift 2
	ip netns exec "$nsA" "$BIN" send --iface va --dst 198.18.0.2 --src 198.18.0.1 --dst-mac "$mac" --backend "$SENDER" --cpus 0 \
		--count "$COUNT" "$@" --json --log-level warn >"$out.send" 2>"$out.send.err" || { echo "bench: send: $(tail -3 "$out.send.err")" >&2; return 1; }
	wait "$recv_pid" || { echo "bench: $what: $(tail -3 "$out.recv.err")" >&2; recv_pid=; return 1; }
	recv_pid=
	jq -e '(.pps | type) == "number"' "$out.send" >/dev/null ||
		{ echo "bench: send --json lacks pps: $(head -c 300 "$out.send")" >&2; return 1; }
}

# sender_line: what the script prints about its sender: one line, or
# when xdp was passed over the reasons and which backend sends instead.
sender_line() {
	if [ -z "$SENDER_WHY" ]; then
		echo "sender: xdp (the fastest sender on a veth)"
	else
		echo "$SENDER_WHY"
		echo "sender: $SENDER instead of xdp, the next fastest sender on a veth that runs here (docs/benchmarks.md)"
	fi
}
