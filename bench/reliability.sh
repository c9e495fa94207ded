#!/usr/bin/env bash
# The reliability suite (run as root: `make reliability`): the
# TestReliability* tests of cmd/linerate/internal/e2e — real agents in a lab's
# namespaces SIGKILLed, their coordinators SIGKILLed, a management link
# cut, every gRPC request type fuzzed, every long-running command sent
# SIGHUP/SIGINT/SIGTERM at each phase, bad input of every kind — at size
# N, their figures printed and written into docs/reliability.md (between
# its "figures" markers, with the date and the machine). A failing test
# fails the script; its figures are still printed and written, marked.
#
# Environment: N (20: kills of each kind and fuzz rounds; empty: the
# tests' own small default, as make test runs them), DOCS (1: write
# docs/reliability.md; 0: print only), RUN (a -run regexp, default every
# part), GO (go), LOG (the go test -v output, kept:
# /tmp/linerate-reliability.log).
set -uo pipefail
N=${N-20}
DOCS=${DOCS:-1}
RUN=${RUN:-^TestReliability}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
doc=$root/docs/reliability.md

[ "$(id -u)" = 0 ] || { echo "reliability: needs root (namespaces, XDP)" >&2; exit 1; }
log=${LOG:-/tmp/linerate-reliability.log}

start=$(date -u +%s)
echo "reliability: N=${N:-default} on $(nproc) CPUs, $(uname -r); log $log"
(cd "$root" && LINERATE_RELIABILITY_N=$N $GO test -count=1 -timeout 90m -tags traffic -p 1 -run "$RUN" -v ./cmd/linerate/internal/e2e) >"$log" 2>&1
status=$?
took=$(( $(date -u +%s) - start ))
figures=$(sed -nE 's/.*FIGURE (TestReliability[A-Za-z]*): (.*)$/\1\t\2/p' "$log")
verdicts=$(grep -E '^--- (PASS|FAIL): TestReliability' "$log" | sed -E 's/^--- //')
if [ -z "$figures" ]; then
	echo "reliability: no figures; the end of the log:" >&2
	tail -40 "$log" >&2
	exit 1
fi
printf '%s\n' "$figures" | awk -F'\t' '$1 != last { print ""; print $1; last = $1 } { print "  " $2 }'
echo
printf '%s\n' "$verdicts"
[ "$status" = 0 ] || echo "reliability: failures: the FAIL tests above; their messages are in $log" >&2

if [ "$DOCS" = 1 ]; then
	block=$(mktemp)
	{
		echo "<!-- figures:begin (bench/reliability.sh writes this part) -->"
		echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), N=${N:-default}, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r), ${took} s; verdicts: $(printf '%s' "$verdicts" | tr '\n' ';' | sed 's/;$//; s/;/; /g')."
		echo
		printf '%s\n' "$figures" | awk -F'\t' '$1 != last { if (last != "") print "```"; print ""; print "**" $1 "**"; print ""; print "```"; last = $1 } { print $2 } END { print "```" }'
		echo "<!-- figures:end -->"
	} >"$block"
	awk -v block="$block" '
		/<!-- figures:begin/ { while ((getline l < block) > 0) print l; skip = 1; next }
		/<!-- figures:end -->/ { skip = 0; next }
		!skip' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
	rm -f "$block"
	echo "reliability: figures written into $doc"
fi
exit "$status"
