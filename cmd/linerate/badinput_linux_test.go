package main

import (
	"strings"
	"testing"
)

// badCommandInputs are command lines the coordinator's and the lab's
// commands refuse before they touch anything, with exit 2 and what the
// stderr names; the reliability suite runs them too, as root, comparing
// the host before and after (TestReliabilityBadInput).
var badCommandInputs = []struct {
	args []string
	want string
}{
	{[]string{"lab", "run", "--name", "x/../../..", "--count", "10"}, `lab name "x/../../..": 1-20 letters, digits`},
	{[]string{"lab", "down", "--name", "x/../../etc"}, `--name: lab name "x/../../etc"`},
	{[]string{"lab", "down"}, "give --name NAME or --all"},
	{[]string{"lab", "run", "--loss-every", "1"}, "--loss-every 1: would drop every packet"},
	{[]string{"lab", "run", "--loss", "101"}, "--loss 101: want a percentage"},
	{[]string{"lab", "run", "--shape", "5bit"}, `--shape "5bit": 5 bit/s: want 8kbit to 400gbit`},
	{[]string{"lab", "run", "--shape", "fast"}, `--shape "fast"`},
	{[]string{"lab", "run", "--name", "abcdefghijkl"}, "at most 11 characters with a management network"},
	{[]string{"lab", "run", "--senders", "0"}, "0 senders and 2 receivers: want at least one of each"},
	{[]string{"lab", "run", "--queues", "65"}, "--queues 65: want 1-64"},
	{[]string{"lab", "run", "--hosts", "xen"}, `--hosts "xen": want netns (network namespaces) or vm (qemu guests)`},
	{[]string{"lab", "run", "--vcpus", "8"}, "--vcpus 8: only VM hosts have vCPUs (--hosts vm)"},
	{[]string{"lab", "run", "--hosts", "vm", "--vcpus", "3"}, "--vcpus 3"},
	{[]string{"lab", "run", "--hosts", "vm", "--vcpus", "4", "--queues", "8"}, "--queues 8"},
	{[]string{"lab", "up", "--hosts", "vm", "--senders", "10", "--receivers", "7"}, "17 VM hosts: at most 16"},
	{[]string{"lab", "campaign", "--sizes", "40"}, "frame_sizes[0]: 40: want 64-9018 bytes"},
	{[]string{"run", "--senders", "a", "--receivers", "b"}, "neither a duration nor a count"},
	{[]string{"members"}, "--join: give the gossip address"},
	{[]string{"run", "--html", "/nonexistent/r.html", "--count", "1"}, "--html /nonexistent/r.html: directory /nonexistent does not exist"},
	{[]string{"lab", "run", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	{[]string{"lab", "campaign", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	{[]string{"campaign", "run", "spec.yaml", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
}

// The coordinator's and the lab's commands refuse bad input before they
// touch anything, with exit 2 and the input named; none of these needs
// root, so they run everywhere.
func TestCommandsBadInput(t *testing.T) {
	for _, tc := range badCommandInputs {
		code, _, errOut := linerate(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.args, code, errOut, tc.want)
		}
	}
}
