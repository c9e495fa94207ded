package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
)

func host(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := fsfixture.UnpackFile("../../topology/testdata/apply-basic.tree", dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func linerate(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// treeSum hashes every path, mode, link target and content below dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := d.Info()
		fmt.Fprintf(h, "%s %v\n", p, info.Mode())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintln(h, l)
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestIRQPlanJSONContract(t *testing.T) {
	root := host(t)
	code, out, errOut := linerate(t, "irq", "plan", "--iface", "eth0", "--root", root, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Iface     string `json:"iface"`
		Driver    string `json:"driver"`
		PCI       string `json:"pci"`
		NUMANode  int    `json:"numa_node"`
		LocalCPUs []int  `json:"local_cpus"`
		Queues    []struct {
			Queue   int    `json:"queue"`
			IRQ     int    `json:"irq"`
			Name    string `json:"name"`
			CPU     *int   `json:"cpu"`
			Current string `json:"current"`
		} `json:"queues"`
		Skipped []struct {
			IRQ    int    `json:"irq"`
			Name   string `json:"name"`
			Reason string `json:"reason"`
		} `json:"skipped"`
		Warnings []string `json:"warnings"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Iface != "eth0" || got.Driver != "ixgbe" || got.PCI != "0000:3b:00.0" || got.NUMANode != 0 ||
		fmt.Sprint(got.LocalCPUs) != "[0 1 2 3]" || len(got.Queues) != 4 || got.Warnings == nil {
		t.Fatalf("plan: %+v", got)
	}
	for i, q := range got.Queues {
		if q.Queue != i || q.IRQ != 41+i || q.Name != fmt.Sprintf("eth0-TxRx-%d", i) || q.CPU == nil || *q.CPU != i || q.Current != "0-7" {
			t.Errorf("queue %d: %+v", i, q)
		}
	}
	if len(got.Skipped) != 2 || got.Skipped[0].IRQ != 40 || got.Skipped[0].Reason == "" {
		t.Errorf("skipped: %+v", got.Skipped)
	}

	code, out, _ = linerate(t, "irq", "show", "--iface", "eth0", "--root", root, "--json")
	if code != 0 || strings.Contains(out, `"cpu"`) || !strings.Contains(out, `"current": "0-7"`) {
		t.Errorf("show: exit %d, output has cpu or lacks current:\n%s", code, out)
	}
	code, out, _ = linerate(t, "irq", "plan", "--iface", "eth0", "--root", root)
	if code != 0 || !strings.Contains(out, "PLANNED CPU") || !strings.Contains(out, "eth0-TxRx-3") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestIRQBadInput(t *testing.T) {
	root := host(t)
	sum := treeSum(t, root)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"irq", "show", "--iface", "eth9", "--root", root}, []string{`"eth9"`, "valid: eth0"}},
		{[]string{"irq", "plan", "--iface", "eth0", "--root", root, "--threads", "9"}, []string{"thread number 9 exceeds", "queues 4", "local CPUs 4"}},
		{[]string{"irq", "plan", "--iface", "eth0", "--root", root, "--exclude-cpus", "3-1"}, []string{"--exclude-cpus", `"3-1"`}},
		{[]string{"irq", "apply", "--iface", "eth0", "--root", root, "--irqbalance", "sometimes"}, []string{`"sometimes"`, "refuse and ignore"}},
		{[]string{"irq", "plan", "--root", root}, []string{"iface"}},
		{[]string{"irq", "plan", "--iface", "eth0", "--root", filepath.Join(root, "nope")}, []string{"--root", "not a directory"}},
		{[]string{"irq", "verify", "--iface", "eth0", "--root", root, "--for", "0s"}, []string{"--for", "positive"}},
		{[]string{"irq", "snapshot", "--iface", "eth0", "--root", root}, []string{"-o"}},
		{[]string{"irq", "frobnicate"}, nil},
		{[]string{"--log-level", "loud", "irq", "show", "--iface", "eth0", "--root", root}, []string{"--log-level"}},
	} {
		code, _, errOut := linerate(t, tt.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, errOut, w)
			}
		}
	}
	if treeSum(t, root) != sum {
		t.Error("bad input changed the host root")
	}
}

func TestIRQApplyRestoreLeavesHostAsFound(t *testing.T) {
	root := host(t)
	state := t.TempDir()
	sum := treeSum(t, root)
	code, out, errOut := linerate(t, "irq", "apply", "--iface", "eth0", "--root", root, "--state-dir", state, "--json")
	if code != 0 {
		t.Fatalf("apply exit %d: %s", code, errOut)
	}
	var res struct {
		Changes []struct {
			IRQ    int    `json:"irq"`
			To     string `json:"to"`
			Status string `json:"status"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Changes) != 4 || res.Changes[3].To != "3" || res.Changes[3].Status != "applied" {
		t.Fatalf("apply output: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "proc/irq/43/smp_affinity_list")); string(b) != "2\n" {
		t.Errorf("irq 43 after apply: %q", b)
	}
	if treeSum(t, root) == sum {
		t.Fatal("apply changed nothing")
	}
	code, out, errOut = linerate(t, "irq", "restore", "--root", root, "--state-dir", state)
	if code != 0 || !strings.Contains(out, "restored") {
		t.Fatalf("restore exit %d: %s %s", code, out, errOut)
	}
	if treeSum(t, root) != sum {
		t.Error("host root differs after apply + restore")
	}
	code, out, _ = linerate(t, "irq", "restore", "--root", root, "--state-dir", state)
	if code != 0 || !strings.Contains(out, "nothing to restore") {
		t.Errorf("second restore: exit %d %q", code, out)
	}
}

func TestIRQSnapshotReplays(t *testing.T) {
	root := host(t)
	snap := filepath.Join(t.TempDir(), "host.tar.gz")
	if code, _, errOut := linerate(t, "irq", "snapshot", "--iface", "eth0", "--root", root, "-o", snap); code != 0 {
		t.Fatalf("snapshot: %s", errOut)
	}
	_, want, _ := linerate(t, "irq", "plan", "--iface", "eth0", "--root", root, "--json")
	code, got, errOut := linerate(t, "irq", "plan", "--iface", "eth0", "--root", snap, "--json")
	if code != 0 || got != want {
		t.Errorf("plan from snapshot (exit %d, %s) differs:\n%s\nwant:\n%s", code, errOut, got, want)
	}
}

func TestIRQVerifyFlagsNothingWhenIdle(t *testing.T) {
	root := host(t)
	code, out, errOut := linerate(t, "irq", "verify", "--iface", "eth0", "--root", root, "--state-dir", t.TempDir(), "--for", "10ms")
	if code != 0 || !strings.Contains(out, "eth0-TxRx-0") {
		t.Errorf("verify exit %d: %s %s", code, out, errOut)
	}
}
