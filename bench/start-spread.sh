#!/usr/bin/env bash
# Benchmark (run by hand as root: `make bench-start`): how tightly a
# scheduled start begins, measured at the traffic. ROUNDS times it runs
# `linerate lab run` with 2 senders and 2 receivers (namespaces on this
# kernel: every host reads one clock, so the spreads are exact) and prints,
# per round, the spread of the streams' first frames (senders' stamps) and
# of their first arrivals (receivers' clock): p50, p99 and max in µs, from
# the run's JSON (start_spread). Last, the medians over the rounds and the
# verdict on the target: p99 of the first-frame spread <= TARGET_US (200).
# Not a pass/fail test: figures only (the exit status is 0 whatever the
# verdict, non-zero only when a run fails or its JSON lacks a field read
# here).
#
# Environment: ROUNDS (5), COUNT (packets per sender, 200000), TARGET_US
# (200), BACKEND (the senders' backend: xdp, afpacket; unset: the lab's
# choice), LINERATE (./bin/linerate), NAME (the lab's name, "ss<pid>").
# BACKEND=xdp fails where the kernel refuses BPF_PROG_RUN's live-frame
# mode (this CI machine since 2026-12-05, docs/benchmarks.md); unset, the
# lab's choice passes over xdp there (afxdp), and the output names it.
# The lab is removed after every round and on Ctrl-C (lab down).
# `make bench-smoke` runs it small: ROUNDS=1 COUNT=20000.
set -euo pipefail
shopt -s inherit_errexit
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-200000}
TARGET_US=${TARGET_US:-200}
BIN=${LINERATE:-./bin/linerate}
NAME=${NAME:-ss$(($$ % 100000))}
BACKEND=${BACKEND:-}
backend=()
[ -z "$BACKEND" ] || backend=(--backend "$BACKEND")

[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces, XDP)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: jq missing (apt-get install jq)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable linerate (set LINERATE=, or make build)" >&2; exit 1; }
for v in ROUNDS COUNT TARGET_US; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive whole number" >&2; exit 1; }
done

tmp=$(mktemp -d)
cleanup() {
	"$BIN" lab down --name "$NAME" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

echo "2x2 lab, $COUNT packets per sender, backend ${BACKEND:-as the lab picks}, $ROUNDS rounds"
printf '%-6s %-22s %9s %9s %9s   %-22s %9s %9s %9s\n' round "first frame (clocks)" p50_us p99_us max_us "first arrival (clocks)" p50_us p99_us max_us
failed=0
for r in $(seq 1 "$ROUNDS"); do
	out=$tmp/r$r.json
	if ! "$BIN" lab run --name "$NAME" --senders 2 --receivers 2 --count "$COUNT" "${backend[@]}" --json --log-level warn \
		--results-dir "$tmp/results" >"$out" 2>"$tmp/r$r.err"; then
		echo "bench: round $r: lab run failed: $(jq -r '.error // empty' "$out" 2>/dev/null) $(tail -3 "$tmp/r$r.err")" >&2
		failed=$((failed + 1))
		"$BIN" lab down --name "$NAME" >/dev/null 2>&1 || true
		continue
	fi
	# Every field read below, with its type: a renamed key fails the
	# round here instead of printing as "-" or "null".
	if ! jq -e '
		def spread: type == "object" and (.streams | type) == "number" and (.clocks | type) == "string"
			and all(.p50_us, .p99_us, .max_us; type == "number");
		(.start_spread.first_frame | spread) and (.start_spread.first_arrival | spread)
		and (.start_skew_us | type) == "number"
		and ([.hosts[] | select(.role == "sender") | .backend | strings] | length) > 0' "$out" >/dev/null; then
		echo "bench: round $r: lab run --json lacks start_spread.first_frame/first_arrival {streams, clocks, p50_us, p99_us, max_us}, start_skew_us or the senders' hosts[].backend: $(head -c 600 "$out")" >&2
		failed=$((failed + 1))
		continue
	fi
	jq -r --arg r "$r" '
		def f(s): if s == null or s.streams == 0 then ["-", "-", "-", "-"] else [s.clocks, (s.p50_us|tostring), (s.p99_us|tostring), (s.max_us|tostring)] end;
		(f(.start_spread.first_frame) + f(.start_spread.first_arrival)) as $v
		| [$r] + $v | @tsv' "$out" |
		awk -F'\t' '{printf "%-6s %-22s %9s %9s %9s   %-22s %9s %9s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
	jq -r 'select(.start_spread.first_frame.streams > 0) | .start_spread.first_frame.p99_us' "$out" >>"$tmp/ff_p99"
	jq -r 'select(.start_spread.first_frame.streams > 0) | .start_spread.first_frame.p50_us' "$out" >>"$tmp/ff_p50"
	jq -r 'select(.start_spread.first_frame.streams > 0) | .start_spread.first_frame.max_us' "$out" >>"$tmp/ff_max"
	jq -r 'select(.start_spread.first_arrival.streams > 0) | .start_spread.first_arrival.p99_us' "$out" >>"$tmp/fa_p99"
	jq -r 'select(.start_spread.first_arrival.streams > 0) | .start_spread.first_arrival.p50_us' "$out" >>"$tmp/fa_p50"
	jq -r 'select(.start_spread.first_arrival.streams > 0) | .start_spread.first_arrival.max_us' "$out" >>"$tmp/fa_max"
	jq -r '.start_skew_us // empty' "$out" >>"$tmp/skew"
	jq -r '[.hosts[] | select(.role == "sender") | .backend] | unique | join(",")' "$out" >>"$tmp/backends"
done
touch "$tmp/ff_p99" "$tmp/ff_p50" "$tmp/ff_max" "$tmp/fa_p99" "$tmp/fa_p50" "$tmp/fa_max" "$tmp/skew"
echo
echo "medians over $((ROUNDS - failed)) rounds:"
echo "  first frame:   p50 $(median <"$tmp/ff_p50") µs, p99 $(median <"$tmp/ff_p99") µs, max $(median <"$tmp/ff_max") µs"
echo "  first arrival: p50 $(median <"$tmp/fa_p50") µs, p99 $(median <"$tmp/fa_p99") µs, max $(median <"$tmp/fa_max") µs"
echo "  agents' start skew (their timers, not the traffic): $(median <"$tmp/skew") µs"
echo "  senders' backend: $(sort -u "$tmp/backends" 2>/dev/null | paste -sd' ')"
p99=$(median <"$tmp/ff_p99")
if [ "$p99" = "-" ]; then
	echo "target: first-frame p99 <= $TARGET_US µs: no figure"
elif awk -v p="$p99" -v t="$TARGET_US" 'BEGIN {exit !(p <= t)}'; then
	echo "target: first-frame p99 <= $TARGET_US µs: met ($p99 µs)"
else
	echo "target: first-frame p99 <= $TARGET_US µs: NOT met ($p99 µs)"
fi
[ "$failed" = 0 ]
