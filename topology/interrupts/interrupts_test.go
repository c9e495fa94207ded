package interrupts

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// virtioFile is /proc/interrupts of a current x86 virtio guest.
const virtioFile = `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 28:          0          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config
 38:          0        169 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 39:        109          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
NMI:          0          0   Non-maskable interrupts
LOC:      42335      90653   Local timer interrupts
ERR:          0
MIS:          0
PIN:          0          0   Posted-interrupt notification event
`

func c2(a, b uint64) map[int]uint64 { return map[int]uint64{0: a, 1: b} }

func TestParseFullFile(t *testing.T) {
	got, err := Parse(strings.NewReader(virtioFile))
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		CPUs: []int{0, 1},
		IRQs: []IRQ{
			{Number: 24, Counts: c2(1, 0), Chip: "IO-APIC", HWIRQ: "5", Trigger: "edge",
				Actions: []string{"ACPI:Ged"}, Tail: "IO-APIC 5-edge ACPI:Ged"},
			{Number: 28, Counts: c2(0, 0), Chip: "PCI-MSIX-0000:00:01.0", HWIRQ: "0", Trigger: "edge",
				Actions: []string{"virtio0-config"}, Tail: "PCI-MSIX-0000:00:01.0 0-edge virtio0-config"},
			{Number: 38, Counts: c2(0, 169), Chip: "PCI-MSIX-0000:00:03.0", HWIRQ: "1", Trigger: "edge",
				Actions: []string{"virtio2-input.0"}, Tail: "PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0"},
			{Number: 39, Counts: c2(109, 0), Chip: "PCI-MSIX-0000:00:03.0", HWIRQ: "2", Trigger: "edge",
				Actions: []string{"virtio2-output.0"}, Tail: "PCI-MSIX-0000:00:03.0 2-edge virtio2-output.0"},
		},
		Other: []Row{
			{Name: "NMI", Counts: c2(0, 0), Desc: "Non-maskable interrupts"},
			{Name: "LOC", Counts: c2(42335, 90653), Desc: "Local timer interrupts"},
			{Name: "ERR", Counts: map[int]uint64{0: 0}},
			{Name: "MIS", Counts: map[int]uint64{0: 0}},
			{Name: "PIN", Counts: c2(0, 0), Desc: "Posted-interrupt notification event"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	if irq, ok := got.ByNumber(38); !ok || irq.Total() != 169 {
		t.Errorf("ByNumber(38) = %+v, %v; want total 169", irq, ok)
	}
	if _, ok := got.ByNumber(99); ok {
		t.Error("ByNumber(99) found an IRQ")
	}
}

// layoutCases are single rows under a "CPU0 CPU1" header; Counts is
// always {0: 12, 1: 0} and Tail is checked separately.
var layoutCases = []struct {
	name, row                   string
	chip, hwirq, trig, tailWant string
	actions                     []string
}{
	{"3.x PCI-MSI-edge", ` 98:   12   0   PCI-MSI-edge      mlx5_comp0@pci:0000:81:00.0`,
		"PCI-MSI", "", "edge", "", []string{"mlx5_comp0@pci:0000:81:00.0"}},
	{"3.x IR-PCI-MSI-edge", ` 98:   12   0   IR-PCI-MSI-edge      eth0-TxRx-0`,
		"IR-PCI-MSI", "", "edge", "", []string{"eth0-TxRx-0"}},
	{"xen pirq", ` 98:   12   0   xen-pirq-msi-x     eth0-TxRx-0`,
		"xen-pirq", "", "msi-x", "", []string{"eth0-TxRx-0"}},
	{"xen pirq bare", ` 98:   12   0   xen-pirq-msi-x     eth0`,
		"xen-pirq", "", "msi-x", "", []string{"eth0"}},
	{"xen dyn event", ` 98:   12   0   xen-dyn-event     xenbus`,
		"xen-dyn", "", "event", "", []string{"xenbus"}},
	{"xen percpu virq", ` 98:   12   0   xen-percpu-virq      timer0`,
		"xen-percpu", "", "virq", "", []string{"timer0"}},
	{"4.x", ` 57:  12  0  IR-PCI-MSI 524288-edge      i40e-eth0-TxRx-0`,
		"IR-PCI-MSI", "524288", "edge", "IR-PCI-MSI 524288-edge i40e-eth0-TxRx-0", []string{"i40e-eth0-TxRx-0"}},
	{"6.x IR-PCI-MSIX", ` 57:  12  0  IR-PCI-MSIX-0000:01:00.0    1-edge      mlx5_comp0@pci:0000:01:00.0`,
		"IR-PCI-MSIX-0000:01:00.0", "1", "edge", "", []string{"mlx5_comp0@pci:0000:01:00.0"}},
	{"6.x PCI-MSIX", ` 57:  12  0  PCI-MSIX-0000:27:00.0   2-edge      eth0-Tx-Rx-0`,
		"PCI-MSIX-0000:27:00.0", "2", "edge", "", []string{"eth0-Tx-Rx-0"}},
	{"hyper-v chip with spaces", ` 57:  12  0  Hyper-V PCIe MSI 2701534461953-edge      mlx5_comp0@pci:4ea0:00:02.0`,
		"Hyper-V PCIe MSI", "2701534461953", "edge", "Hyper-V PCIe MSI 2701534461953-edge mlx5_comp0@pci:4ea0:00:02.0",
		[]string{"mlx5_comp0@pci:4ea0:00:02.0"}},
	{"arm GICv3 Level", ` 11:  12  0  GICv3  25 Level     arch_timer`,
		"GICv3", "25", "Level", "GICv3 25 Level arch_timer", []string{"arch_timer"}},
	{"arm ITS Edge", ` 11:  12  0  ITS-MSI 524288 Edge      eth0-TxRx-0`,
		"ITS-MSI", "524288", "Edge", "", []string{"eth0-TxRx-0"}},
	{"shared actions", `  16:  12  0   IO-APIC  16-fasteoi   uhci_hcd:usb5, uhci_hcd:usb11, ahci[0000:02:00.0]`,
		"IO-APIC", "16", "fasteoi", "IO-APIC 16-fasteoi uhci_hcd:usb5, uhci_hcd:usb11, ahci[0000:02:00.0]",
		[]string{"uhci_hcd:usb5", "uhci_hcd:usb11", "ahci[0000:02:00.0]"}},
	{"action with space", ` 120:  12  0  PCI-MSI 16384-edge  aerdrv, PCIe PME`,
		"PCI-MSI", "16384", "edge", "", []string{"aerdrv", "PCIe PME"}},
	{"empty action", `67:  12  0  PCI-MSIX-0000:27:00.0   2-edge`,
		"PCI-MSIX-0000:27:00.0", "2", "edge", "PCI-MSIX-0000:27:00.0 2-edge", []string{}},
	{"no trigger", ` 29:  12  0  GIC  arch_timer`,
		"GIC", "", "", "GIC arch_timer", []string{"arch_timer"}},
	{"nothing after counts", ` 29:  12  0`,
		"", "", "", "", []string{}},
	{"tabs", "57:\t12\t0\tIR-PCI-MSI\t524288-edge\t\ti40e-eth0-TxRx-0",
		"IR-PCI-MSI", "524288", "edge", "IR-PCI-MSI 524288-edge i40e-eth0-TxRx-0", []string{"i40e-eth0-TxRx-0"}},
	{"crlf", " 57:  12  0  IR-PCI-MSI 524288-edge  eth0\r",
		"IR-PCI-MSI", "524288", "edge", "IR-PCI-MSI 524288-edge eth0", []string{"eth0"}},
}

func TestParseLayouts(t *testing.T) {
	for _, tc := range layoutCases {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader("           CPU0       CPU1\n" + tc.row + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.IRQs) != 1 {
				t.Fatalf("got %d IRQs, want 1", len(tab.IRQs))
			}
			got := tab.IRQs[0]
			want := IRQ{Number: got.Number, Counts: c2(12, 0), Chip: tc.chip, HWIRQ: tc.hwirq,
				Trigger: tc.trig, Actions: tc.actions, Tail: got.Tail}
			if tc.tailWant != "" {
				want.Tail = tc.tailWant
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if got.Actions == nil {
				t.Error("Actions is nil")
			}
		})
	}
}

func TestOfflineCPU(t *testing.T) {
	tab, err := Parse(strings.NewReader("  CPU0 CPU1 CPU3\n 5: 1 2 3 IO-APIC 5-edge x\nLOC: 7 8 9 Local timer interrupts\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 3}, tab.CPUs); diff != "" {
		t.Errorf("CPUs (-want +got):\n%s", diff)
	}
	want := map[int]uint64{0: 1, 1: 2, 3: 3}
	if diff := cmp.Diff(want, tab.IRQs[0].Counts); diff != "" {
		t.Errorf("IRQ counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]uint64{0: 7, 1: 8, 3: 9}, tab.Other[0].Counts); diff != "" {
		t.Errorf("LOC counts (-want +got):\n%s", diff)
	}
}

func TestFewerCounts(t *testing.T) {
	tab, err := Parse(strings.NewReader("CPU0 CPU1 CPU2\n 5: 4 IO-APIC 5-edge x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]uint64{0: 4}, tab.IRQs[0].Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// messyFile has lost its leading spaces, uses tabs, has a blank line before
// PIN, CRLF line ends and no final newline.
const messyFile = "CPU0\tCPU1\r\n" +
	"24:\t1\t0\tIO-APIC\t5-edge\tACPI:Ged\r\n" +
	"38: 0 169 PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0\r\n" +
	"NMI: 0 0 Non-maskable interrupts\r\n" +
	"ERR: 0\r\n" +
	"\r\n" +
	"PIN: 0 0 Posted-interrupt notification event\r\n" +
	"67: 3 4 PCI-MSIX-0000:27:00.0 2-edge"

func TestParseMessy(t *testing.T) {
	got, err := Parse(strings.NewReader(messyFile))
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		CPUs: []int{0, 1},
		IRQs: []IRQ{
			{Number: 24, Counts: c2(1, 0), Chip: "IO-APIC", HWIRQ: "5", Trigger: "edge",
				Actions: []string{"ACPI:Ged"}, Tail: "IO-APIC 5-edge ACPI:Ged"},
			{Number: 38, Counts: c2(0, 169), Chip: "PCI-MSIX-0000:00:03.0", HWIRQ: "1", Trigger: "edge",
				Actions: []string{"virtio2-input.0"}, Tail: "PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0"},
			{Number: 67, Counts: c2(3, 4), Chip: "PCI-MSIX-0000:27:00.0", HWIRQ: "2", Trigger: "edge",
				Actions: []string{}, Tail: "PCI-MSIX-0000:27:00.0 2-edge"},
		},
		Other: []Row{
			{Name: "NMI", Counts: c2(0, 0), Desc: "Non-maskable interrupts"},
			{Name: "ERR", Counts: map[int]uint64{0: 0}},
			{Name: "PIN", Counts: c2(0, 0), Desc: "Posted-interrupt notification event"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

// manyCPUs returns a header with n CPUs and two IRQ rows whose count for
// CPU c is c and c*1000.
func manyCPUs(n int) string {
	var b strings.Builder
	for c := range n {
		fmt.Fprintf(&b, "%*s", 11, fmt.Sprintf("CPU%d", c))
	}
	b.WriteString("\n")
	for _, row := range []struct {
		irq  int
		mult int
	}{{40, 1}, {41, 1000}} {
		fmt.Fprintf(&b, "%4d:", row.irq)
		for c := range n {
			fmt.Fprintf(&b, " %10d", c*row.mult)
		}
		fmt.Fprintf(&b, "  IR-PCI-MSI %d-edge      eth0-TxRx-%d\n", 524288+row.irq, row.irq)
	}
	return b.String()
}

func TestManyCPUs(t *testing.T) {
	tab, err := Parse(strings.NewReader(manyCPUs(128)))
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.CPUs) != 128 || tab.CPUs[127] != 127 {
		t.Fatalf("CPUs = %v", tab.CPUs)
	}
	irq, ok := tab.ByNumber(41)
	if !ok {
		t.Fatal("IRQ 41 missing")
	}
	if len(irq.Counts) != 128 || irq.Counts[127] != 127000 || irq.Total() != 127*128/2*1000 {
		t.Errorf("IRQ 41 counts wrong: %d entries, CPU127=%d, total %d", len(irq.Counts), irq.Counts[127], irq.Total())
	}
	if irq.Chip != "IR-PCI-MSI" || irq.HWIRQ != "524329" || !irq.HasAction("eth0-TxRx-41") {
		t.Errorf("IRQ 41 = %+v", irq)
	}
}

func TestHasAction(t *testing.T) {
	tests := []struct {
		irq  IRQ
		name string
		want bool
	}{
		{IRQ{Actions: []string{"eth10-TxRx-0"}, Tail: "PCI-MSI 1-edge eth10-TxRx-0"}, "eth1-TxRx-0", false},
		{IRQ{Actions: []string{"eth10-TxRx-0"}, Tail: "PCI-MSI 1-edge eth10-TxRx-0"}, "eth10-TxRx-0", true},
		{IRQ{Actions: []string{"a", "b"}}, "b", true},
		{IRQ{Actions: []string{}}, "", false},
		// Actions not separated: fall back to an anchored tail match.
		{IRQ{Actions: []string{"PCIe MSI eth1"}, Tail: "Hyper-V PCIe MSI eth1"}, "eth1", true},
		{IRQ{Actions: []string{"PCIe MSI eth10-TxRx-0"}, Tail: "Hyper-V PCIe MSI eth10-TxRx-0"}, "eth1", false},
		{IRQ{Actions: []string{"PCIe MSI xeth1"}, Tail: "Hyper-V PCIe MSI xeth1"}, "eth1", false},
		{IRQ{Actions: []string{"x eth1"}, Tail: "eth1"}, "eth1", true},
		// Separated actions: no tail fallback.
		{IRQ{Actions: []string{"aerdrv", "PCIe PME"}, Tail: "PCI-MSI 1-edge aerdrv, PCIe PME"}, "PME", false},
	}
	for _, tc := range tests {
		if got := tc.irq.HasAction(tc.name); got != tc.want {
			t.Errorf("%+v.HasAction(%q) = %v, want %v", tc.irq, tc.name, got, tc.want)
		}
	}
	// Through Parse: chip with spaces and no trigger token.
	tab, err := Parse(strings.NewReader("CPU0\n 9: 1 Hyper-V PCIe MSI eth1\n 10: 1 Hyper-V PCIe MSI eth10-TxRx-0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !tab.IRQs[0].HasAction("eth1") || tab.IRQs[1].HasAction("eth1") {
		t.Errorf("HasAction via Tail wrong: %+v", tab.IRQs)
	}
}

func TestDelta(t *testing.T) {
	before := &Table{CPUs: []int{0, 1}, IRQs: []IRQ{
		{Number: 1, Counts: c2(10, 20)},
		{Number: 2, Counts: c2(5, 5)},
		{Number: 3, Counts: c2(100, 7)}, // gone in after
		{Number: 5, Counts: map[int]uint64{0: 1}},
	}}
	after := &Table{CPUs: []int{0, 1}, IRQs: []IRQ{
		{Number: 1, Counts: c2(15, 20)},
		{Number: 2, Counts: c2(3, 9)}, // CPU0 reset
		{Number: 4, Counts: c2(1, 1)}, // new
		{Number: 5, Counts: c2(1, 2)}, // CPU1 came online
	}}
	want := map[int]map[int]uint64{
		1: {0: 5},
		2: {0: 3, 1: 4},
		5: {1: 2},
	}
	if diff := cmp.Diff(want, Delta(before, after)); diff != "" {
		t.Errorf("Delta (-want +got):\n%s", diff)
	}
	if got := Delta(nil, after); len(got) != 0 {
		t.Errorf("Delta(nil, after) = %v", got)
	}
	// Unchanged IRQ present in both: empty entry.
	if got := Delta(before, before); len(got[1]) != 0 || got[1] == nil {
		t.Errorf("Delta(before, before)[1] = %v, want empty non-nil", got[1])
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "parse /proc/interrupts: empty input"},
		{"blank only", "\n  \n", "empty input"},
		{"no CPU column", "  foo bar\n", `line 1 "  foo bar": header column "foo" is not CPUn`},
		{"rows without header", " 0: 1 2 IO-APIC 2-edge timer\n", `header column "0:" is not CPUn`},
		{"bad cpu id", "CPUx\n", `header column "CPUx" is not CPUn`},
		{"duplicate cpu", "CPU0 CPU0\n", "repeats CPU0"},
		{"missing colon", "CPU0 CPU1\n 5 1 2\n", `line 2 " 5 1 2": missing ":"`},
		{"empty name", "CPU0\n: 1\n", "empty row name"},
		{"count overflow", "CPU0 CPU1 CPU2\n\n 3: 1 2 99999999999999999999999 x\n",
			`line 3 " 3: 1 2 99999999999999999999999 x": count "99999999999999999999999" for CPU2 is not a number`},
		{"irq overflow", "CPU0\n99999999999999999999999: 1\n", "out of range"},
		{"duplicate irq", "CPU0\n 1: 1 a\n 1: 2 b\n", "IRQ 1 repeated"},
		{"too many cpus", strings.Repeat("CPU0 ", maxCPUs+1), "more than 8192"},
		{"line too long", "CPU0\n 1: 1 " + strings.Repeat("x", maxLine+10) + "\n", "line 2: line longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader(tc.text))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", tab)
			}
			if !errors.Is(err, ErrParse) {
				t.Errorf("error %v does not wrap ErrParse", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestReadError(t *testing.T) {
	_, err := Parse(failReader{})
	if err == nil || errors.Is(err, ErrParse) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Parse(failReader) error = %v", err)
	}
}

// 4.x+ kernels print an empty hwirq column for IRQs without a domain, so
// the flow stands alone after the chip.
func TestBlankHWIRQLayout(t *testing.T) {
	in := "           CPU0       CPU1\n" +
		"  72:        12          0   xen-pirq    -msi-x     eth1-TxRx-0\n" +
		"  73:         0          3   xen-pirq    -msi-x     eth1\n" +
		"  74:       400        500   xen-percpu    -virq      timer0\n" +
		"  75:         1          0   xen-dyn    -event     xenbus\n"
	tab, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ chip, trig, action string }{
		{"xen-pirq", "msi-x", "eth1-TxRx-0"}, {"xen-pirq", "msi-x", "eth1"}, {"xen-percpu", "virq", "timer0"}, {"xen-dyn", "event", "xenbus"},
	}
	for k, w := range want {
		irq := tab.IRQs[k]
		if irq.Chip != w.chip || irq.Trigger != w.trig || len(irq.Actions) != 1 || irq.Actions[0] != w.action || irq.HWIRQ != "" {
			t.Errorf("irq %d: chip %q trigger %q hwirq %q actions %q; want %+v", irq.Number, irq.Chip, irq.Trigger, irq.HWIRQ, irq.Actions, w)
		}
	}
}
