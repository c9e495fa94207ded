package vm

import (
	"slices"
	"strings"
	"testing"
)

func TestLayoutValidate(t *testing.T) {
	for _, tc := range []struct {
		l    Layout
		want []string // "" = valid; else every substring the error has
	}{
		{Layout{VCPUs: 2, Queues: 1}, nil},
		{Layout{VCPUs: 4, Queues: 4}, nil},
		{Layout{VCPUs: 32, Queues: 16}, nil},
		{Layout{VCPUs: 0, Queues: 1}, []string{"--vcpus 0", "2 to 32", "each of the two NUMA nodes"}},
		{Layout{VCPUs: 3, Queues: 1}, []string{"--vcpus 3", "two NUMA nodes need an even count"}},
		{Layout{VCPUs: 34, Queues: 1}, []string{"--vcpus 34", "at most 32"}},
		{Layout{VCPUs: 4, Queues: 0}, []string{"--queues 0", "1 to 4", "at least one queue pair"}},
		{Layout{VCPUs: 4, Queues: 5}, []string{"--queues 5", "at most --vcpus (4)", "one queue pair per online CPU"}},
		{Layout{VCPUs: 32, Queues: 17}, []string{"--queues 17", "at most 16", "node 1 has at most 16 CPUs"}},
	} {
		err := tc.l.Validate()
		if tc.want == nil {
			if err != nil {
				t.Errorf("%+v: %v, want valid", tc.l, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: valid, want an error", tc.l)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not say %q", tc.l, err, w)
			}
		}
	}
}

func TestLayoutNodes(t *testing.T) {
	l := Layout{VCPUs: 4, Queues: 4}
	if got := l.Node0CPUs(); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("node 0 of 4 vCPUs: %v", got)
	}
	if got := l.Node1CPUs(); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("node 1 of 4 vCPUs: %v", got)
	}
	if got := (Layout{VCPUs: 2}).Node1CPUs(); !slices.Equal(got, []int{1}) || cpuList(got) != "1" {
		t.Errorf("node 1 of 2 vCPUs: %v (%s)", got, cpuList(got))
	}
}

func TestMemoryMiB(t *testing.T) {
	for in, want := range map[string]int{"1G": 1024, "512M": 512, "2048": 2048, "1T": 1 << 20} {
		if got, err := memoryMiB(in); err != nil || got != want {
			t.Errorf("memoryMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.5G", "-1G", "128M", "513M", "lots"} {
		if _, err := memoryMiB(in); err == nil || !strings.Contains(err.Error(), in) {
			t.Errorf("memoryMiB(%q): %v, want an error naming it", in, err)
		}
	}
}
