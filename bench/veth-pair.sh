# Sourced by the bench scripts that send over one veth pair
# (latency-cost.sh, afxdp-receiver.sh): veth_pair TAG makes two namespaces
# TAG-a and TAG-b joined by va (198.18.0.1/24) and vb (198.18.0.2/24), sets
# nsA, nsB, mac (vb's address) and tmp (a scratch directory), and removes
# all of it, and a receiver left running ($recv_pid), when the script
# exits. Test traffic only on this pair, addresses from 198.18.0.0/15.
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

# send_into OUT WHAT [ARG...]: sends $COUNT 64-byte frames with the xdp
# backend (one thread on CPU 0, ARGs added) from va to the receiver
# $recv_pid on vb, waits for that receiver to end and checks that the
# sender's JSON ($OUT.send) has its pps; fails naming WHAT.
send_into() {
	local out=$1 what=$2
	shift 2
	ip netns exec "$nsA" "$BIN" send --iface va --dst 198.18.0.2 --src 198.18.0.1 --dst-mac "$mac" --backend xdp --cpus 0 \
		--count "$COUNT" "$@" --json --log-level warn >"$out.send" 2>"$out.send.err" || { echo "bench: send: $(tail -3 "$out.send.err")" >&2; return 1; }
	wait "$recv_pid" || { echo "bench: $what: $(tail -3 "$out.recv.err")" >&2; recv_pid=; return 1; }
	recv_pid=
	jq -e '(.pps | type) == "number"' "$out.send" >/dev/null ||
		{ echo "bench: send --json lacks pps: $(head -c 300 "$out.send")" >&2; return 1; }
}
