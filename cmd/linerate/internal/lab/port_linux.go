//go:build linux

package lab

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/linerate/linerate/internal/bpfasm"
	"github.com/linerate/linerate/internal/netns"
)

// Loss is what a switch port does to the test packets (those carrying the
// pktgen header) that cross it. Other frames always pass.
type Loss struct {
	// Every drops every Every-th test packet (counted from the first one
	// the port sees); 0 drops none this way.
	Every uint64
	// BasisPoints drops a random share of test packets, in 1/10000.
	BasisPoints uint32
}

func (l Loss) String() string {
	switch {
	case l.Every > 0:
		return fmt.Sprintf("drop every %d-th test packet", l.Every)
	case l.BasisPoints > 0:
		return fmt.Sprintf("drop %.2f%% of test packets at random", float64(l.BasisPoints)/100)
	}
	return "pass"
}

// PortStats are a port program's counters.
type PortStats struct {
	Frames  uint64 `json:"frames"`       // every frame the port received
	Test    uint64 `json:"test_packets"` // frames carrying the pktgen header
	Dropped uint64 `json:"drops"`        // test packets the program dropped
	Tagged  uint64 `json:"tagged"`       // test packets that came with an 802.1Q tag
}

const (
	statFrames = iota
	statTest
	statDropped
	statTagged
	nStats
)

// XDP actions.
const (
	xdpDrop = 1
	xdpPass = 2
)

// magicLE is pktgen's magic as a little-endian load of its big-endian bytes.
const magicLE = 0x55e99bbe

// fetchAdd is `src = atomic_fetch_add((u64 *)dst, src)` (see bpfasm).
func fetchAdd(dst, src asm.Register) asm.Instruction {
	return bpfasm.AtomicFetch(asm.FetchAdd, dst, src, 0)
}

// portInstructions is the XDP program: count the frame; if it is a test
// packet (Ethernet, optional 802.1Q tag, IPv4 without options or IPv6,
// UDP, pktgen magic at payload offset 0) count it (a tagged one twice: as
// a test packet and as a tagged one) and drop it when loss says so; pass
// everything else.
func portInstructions(loss Loss) asm.Instructions {
	var in asm.Instructions
	add := func(i ...asm.Instruction) { in = append(in, i...) }
	// bump(idx): r1 = old value (fetch-add); clobbers r0-r5.
	bump := func(idx int32, label string) {
		add(
			asm.StoreImm(asm.RFP, -4, int64(idx), asm.Word),
			asm.LoadMapPtr(asm.R1, 0).WithReference("stats"),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.Mov.Imm(asm.R1, 0),
			asm.JEq.Imm(asm.R0, 0, label),
			asm.Mov.Imm(asm.R1, 1),
			fetchAdd(asm.R0, asm.R1),
			asm.Mov.Reg(asm.R0, asm.R0).WithSymbol(label), // r1 = old value (0 when the lookup failed)
		)
	}
	add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, 0, asm.Word), // data
		asm.LoadMem(asm.R8, asm.R6, 4, asm.Word), // data_end
	)
	bump(statFrames, "counted_frame")
	// One block per layout: bounds check up to the end of the magic, then
	// the fixed fields. vlan: 0 or 4; v6: IPv6.
	type layout struct {
		name    string
		vlan    int16
		v6      bool
		nextLbl string
	}
	layouts := []layout{{"v4", 0, false, "try_v4vlan"}, {"v4vlan", 4, false, "try_v6"}, {"v6", 0, true, "try_v6vlan"}, {"v6vlan", 4, true, "pass"}}
	for i, l := range layouts {
		ethType := int16(12 + l.vlan)
		l3 := int16(14 + l.vlan)
		magic := l3 + 28
		if l.v6 {
			magic = l3 + 48
		}
		first := asm.Mov.Reg(asm.R2, asm.R7)
		if i > 0 {
			first = first.WithSymbol("try_" + l.name)
		}
		add(
			first,
			asm.Add.Imm(asm.R2, int32(magic)+4),
			asm.JGT.Reg(asm.R2, asm.R8, l.nextLbl),
		)
		if l.vlan > 0 {
			add(
				asm.LoadMem(asm.R3, asm.R7, 12, asm.Half),
				asm.JNE.Imm(asm.R3, 0x0081, l.nextLbl), // 0x8100 in network order
			)
		}
		if l.v6 {
			add(
				asm.LoadMem(asm.R3, asm.R7, ethType, asm.Half),
				asm.JNE.Imm(asm.R3, 0xdd86, l.nextLbl),
				asm.LoadMem(asm.R3, asm.R7, l3+6, asm.Byte),
				asm.JNE.Imm(asm.R3, 17, l.nextLbl),
			)
		} else {
			add(
				asm.LoadMem(asm.R3, asm.R7, ethType, asm.Half),
				asm.JNE.Imm(asm.R3, 0x0008, l.nextLbl),
				asm.LoadMem(asm.R3, asm.R7, l3, asm.Byte),
				asm.JNE.Imm(asm.R3, 0x45, l.nextLbl),
				asm.LoadMem(asm.R3, asm.R7, l3+9, asm.Byte),
				asm.JNE.Imm(asm.R3, 17, l.nextLbl),
			)
		}
		found := "test_packet"
		if l.vlan > 0 {
			found = "tagged_test_packet"
		}
		add(
			asm.LoadMem(asm.R3, asm.R7, magic, asm.Word),
			asm.JNE.Imm(asm.R3, magicLE, l.nextLbl),
			asm.Ja.Label(found),
		)
	}
	add(asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"), asm.Return())

	// A tagged test packet is counted as such, then as every test packet.
	in = append(in, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("tagged_test_packet"))
	bump(statTagged, "counted_tagged")

	in = append(in, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("test_packet"))
	bump(statTest, "counted_test")
	if loss.Every > 0 {
		add(
			asm.Add.Imm(asm.R1, 1), // this packet's ordinal
			asm.Mod.Imm(asm.R1, int32(loss.Every)),
			asm.JEq.Imm(asm.R1, 0, "drop"),
		)
	}
	if loss.BasisPoints > 0 {
		add(
			asm.FnGetPrandomU32.Call(),
			asm.Mod.Imm(asm.R0, 10000),
			asm.JLT.Imm(asm.R0, int32(loss.BasisPoints), "drop"),
		)
	}
	add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
	if loss.Every == 0 && loss.BasisPoints == 0 {
		return in // nothing jumps to a drop block
	}
	in = append(in, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("drop"))
	bump(statDropped, "counted_drop")
	add(asm.Mov.Imm(asm.R0, xdpDrop), asm.Return())
	return in
}

// Port is an XDP program attached to one switch port.
type Port struct {
	Iface string
	Loss  Loss
	Mode  string // "native" or "generic"
	coll  *ebpf.Collection
	link  link.Link
}

// AttachPort loads the port program for loss and attaches it to iface in
// ns, natively where the driver can (veth can), else in generic mode.
func AttachPort(ns *netns.NS, iface string, loss Loss) (*Port, error) {
	if loss.Every == 1 || loss.BasisPoints > 10000 {
		return nil, fmt.Errorf("switch port %s: loss %+v: want every >= 2 or basis points <= 10000", iface, loss)
	}
	spec := &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{
			"stats": {Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: nStats},
		},
		Programs: map[string]*ebpf.ProgramSpec{
			"port": {Type: ebpf.XDP, License: "GPL", Instructions: portInstructions(loss)},
		},
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		return nil, fmt.Errorf("switch port %s: load XDP program: %w", iface, err)
	}
	p := &Port{Iface: iface, Loss: loss, coll: coll}
	err = ns.Do(func() error {
		ifi, err := netInterface(iface)
		if err != nil {
			return err
		}
		for _, m := range []struct {
			flags link.XDPAttachFlags
			name  string
		}{{link.XDPDriverMode, "native"}, {link.XDPGenericMode, "generic"}} {
			l, aerr := link.AttachXDP(link.XDPOptions{Program: coll.Programs["port"], Interface: ifi, Flags: m.flags})
			if aerr == nil {
				p.link, p.Mode = l, m.name
				return nil
			}
			err = errors.Join(err, fmt.Errorf("%s: %w", m.name, aerr))
		}
		return err
	})
	if err != nil {
		coll.Close()
		return nil, fmt.Errorf("switch port %s in %s: attach XDP: %w", iface, ns.Name, err)
	}
	return p, nil
}

// Stats reads the port's counters.
func (p *Port) Stats() (PortStats, error) { return readPortStats(p.Iface, p.coll.Maps["stats"]) }

// readPortStats reads a port program's counters from its stats map.
func readPortStats(iface string, m *ebpf.Map) (PortStats, error) {
	var v [nStats]uint64
	for i := range v {
		if err := m.Lookup(uint32(i), &v[i]); err != nil {
			return PortStats{}, fmt.Errorf("switch port %s: read counter %d: %w", iface, i, err)
		}
	}
	return PortStats{Frames: v[statFrames], Test: v[statTest], Dropped: v[statDropped], Tagged: v[statTagged]}, nil
}

// PortStatsOf reads a port program's counters from another process than
// the one that attached it (the `lab up` of a lab that is up): found by
// the id of the XDP program attached to the port (see PortOf), whose one
// map is its stats.
func PortStatsOf(iface string, progID uint32) (PortStats, error) {
	prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(progID))
	if err != nil {
		return PortStats{}, fmt.Errorf("switch port %s: open its program (id %d): %w", iface, progID, err)
	}
	defer prog.Close()
	info, err := prog.Info()
	if err != nil {
		return PortStats{}, fmt.Errorf("switch port %s: read its program (id %d): %w", iface, progID, err)
	}
	ids, ok := info.MapIDs()
	if !ok || len(ids) != 1 {
		return PortStats{}, fmt.Errorf("switch port %s: program id %d has maps %v, want the port program's one", iface, progID, ids)
	}
	m, err := ebpf.NewMapFromID(ids[0])
	if err != nil {
		return PortStats{}, fmt.Errorf("switch port %s: open its stats (map id %d): %w", iface, ids[0], err)
	}
	defer m.Close()
	return readPortStats(iface, m)
}

// Close detaches the program and frees its maps.
func (p *Port) Close() error {
	var err error
	if p.link != nil {
		err = p.link.Close()
		p.link = nil
	}
	if p.coll != nil {
		p.coll.Close()
		p.coll = nil
	}
	if err != nil {
		return fmt.Errorf("switch port %s: detach: %w", p.Iface, err)
	}
	return nil
}
