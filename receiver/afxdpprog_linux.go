//go:build linux

package receiver

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// The arrival stamp the redirect program writes in front of a test
// frame (its XDP metadata, which the kernel copies into the socket's
// frame in copy mode too): the program's clock (bpfClock: TAI where the
// kernel has it, else monotonic) at the frame, then stampMagic, so that Go tells a stamp from what a frame's
// headroom held before.
const (
	stampLen   = 16
	stampMagic = 0x6c72_7873_6b74_6d31 // "lrxsktm1"
)

// redirectProgram is the afxdp method's XDP program: a test packet goes to
// the AF_XDP socket of the queue it arrived on, stamped with its arrival,
// everything else to the stack. In C terms:
//
//	parseTest (no pktgen magic -> other[0]++ (per CPU), XDP_PASS)
//	bpf_xdp_adjust_meta(ctx, -16) == 0 && room ->
//	  meta = {now(), stampMagic} (now: the bpfClock's helper)
//	return bpf_redirect_map(xsks, ctx->rx_queue_index, XDP_PASS)
//
// A driver without metadata redirects the frame unstamped (Go then stamps
// it as it reads it); so does the program without stamp, loaded where the
// kernel refuses bpf_xdp_adjust_meta to XDP programs (probeAdjustMeta).
// The redirect's flags are its action when the queue
// has no socket in the map: XDP_PASS, so that the host's own traffic, and
// test packets on a queue without a socket, are never dropped here.
func redirectProgram(xsks, other int, now asm.BuiltinFunc, stamp bool) asm.Instructions {
	in := asm.Instructions{asm.StoreMem(asm.RFP, stCtx, asm.R1, asm.DWord)}
	in = append(in, parseTest(xdpParams{reflect: -1})...)
	if stamp {
		in = append(in, stampMeta(now)...)
	}
	in = append(in,
		asm.LoadMapPtr(asm.R1, xsks).WithSymbol("redirect"),
		asm.LoadMem(asm.R2, asm.RFP, stQueue, asm.Word),
		asm.Mov.Imm(asm.R3, xdpPass),
		asm.FnRedirectMap.Call(),
		asm.Return(),
		asm.StoreImm(asm.RFP, stCPUKey, 0, asm.Word).WithSymbol("other"),
	)
	in = append(in, lookup(other, stCPUKey)...)
	in = append(in, asm.JEq.Imm(asm.R0, 0, "pass"))
	in = append(in, inc(asm.R0, 0)...)
	return append(in,
		asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"),
		asm.Return(),
	)
}

// stampMeta writes the arrival stamp into the frame's metadata: room for
// it made with bpf_xdp_adjust_meta, else (a driver without metadata) on
// to "redirect" unstamped.
func stampMeta(now asm.BuiltinFunc) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R1, asm.RFP, stCtx, asm.DWord),
		asm.Mov.Imm(asm.R2, -stampLen),
		asm.FnXdpAdjustMeta.Call(),
		asm.JNE.Imm(asm.R0, 0, "redirect"),
		now.Call(),
		asm.Mov.Reg(asm.R6, asm.R0),
		asm.LoadMem(asm.R1, asm.RFP, stCtx, asm.DWord),
		asm.LoadMem(asm.R2, asm.R1, 8, asm.Word), // data_meta
		asm.LoadMem(asm.R3, asm.R1, 0, asm.Word), // data
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, stampLen),
		asm.JGT.Reg(asm.R4, asm.R3, "redirect"),
		asm.StoreMem(asm.R2, 0, asm.R6, asm.DWord),
		asm.LoadImm(asm.R5, stampMagic, asm.DWord),
		asm.StoreMem(asm.R2, 8, asm.R5, asm.DWord),
	}
}

// redirector is the afxdp method's XDP side: the XSKMAP (receive queue →
// socket), the count of frames that were not test packets, the redirect
// program and its link.
type redirector struct {
	xsks  *ebpf.Map
	other *ebpf.Map // per CPU, one u64: frames without the pktgen magic
	prog  *ebpf.Program
	lnk   link.Link
	// stamps says the program stamps arrivals (the kernel lets it call
	// bpf_xdp_adjust_meta: probeAdjustMeta).
	stamps bool
}

// loadRedirector creates the XSKMAP of queues entries and loads the
// redirect program, with the arrival stamp unless the kernel refuses the
// helper it takes (probeAdjustMeta); nothing is attached.
func loadRedirector(queues int, clk bpfClock, log interface{ Debug(string, ...any) }) (_ *redirector, err error) {
	r := &redirector{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	r.xsks, err = ebpf.NewMap(&ebpf.MapSpec{Name: "lr_xsks", Type: ebpf.XSKMap, KeySize: 4, ValueSize: 4, MaxEntries: uint32(queues)})
	if err != nil {
		return nil, fmt.Errorf("afxdp: create the XSKMAP of %d queues: %w", queues, err)
	}
	r.other, err = ebpf.NewMap(&ebpf.MapSpec{Name: "lr_xsk_other", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		return nil, fmt.Errorf("afxdp: create the other-frames counter: %w", err)
	}
	switch perr := probeAdjustMeta(loadReleased); {
	case perr == nil:
		r.stamps = true
	case errors.Is(perr, ebpf.ErrNotSupported):
		log.Debug("afxdp redirect program: frames go unstamped, stamped as read", "why", perr)
	default:
		return nil, fmt.Errorf("afxdp: %w", perr)
	}
	r.prog, err = ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Name: "lr_xsk_redirect", Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: redirectProgram(r.xsks.FD(), r.other.FD(), clk.helper, r.stamps),
	}, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelBranch})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			log.Debug("afxdp redirect program: verifier log", "log", fmt.Sprintf("%+v", ve))
		}
		return nil, fmt.Errorf("afxdp: load the redirect program: %w", err)
	}
	return r, nil
}

// stampText says where the arrivals are stamped, for the method's
// reason.
func (r *redirector) stampText() string {
	if r.stamps {
		return arrivalsStamped
	}
	return arrivalsAsRead
}

// The two stampTexts.
const (
	arrivalsStamped = "arrivals stamped by the redirect program (XDP metadata)"
	arrivalsAsRead  = "arrivals stamped as read (the kernel refuses XDP programs bpf_xdp_adjust_meta)"
)

// add puts the socket fd on queue q into the map.
func (r *redirector) add(q, fd int) error {
	if err := r.xsks.Update(uint32(q), uint32(fd), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("afxdp: put the socket of queue %d into the XSKMAP: %w", q, err)
	}
	return nil
}

// attach attaches the program to ifindex (attachXDP).
func (r *redirector) attach(ifindex int) (mode, detail string, err error) {
	r.lnk, mode, detail, err = attachXDP(r.prog, ifindex, "afxdp: the redirect program")
	return mode, detail, err
}

// detach removes the program from the interface (idempotent).
func (r *redirector) detach() error {
	if r.lnk == nil {
		return nil
	}
	err := r.lnk.Close()
	r.lnk = nil
	if err != nil {
		return fmt.Errorf("afxdp: detach the redirect program: %w", err)
	}
	return nil
}

// close detaches and releases the program and the map.
func (r *redirector) close() error {
	err := r.detach()
	if r.prog != nil {
		r.prog.Close()
		r.prog = nil
	}
	for _, m := range []**ebpf.Map{&r.xsks, &r.other} {
		if *m != nil {
			(*m).Close()
			*m = nil
		}
	}
	return err
}

// others sums the CPUs' counts of frames that were not test packets.
func (r *redirector) others() (uint64, error) {
	var per []uint64
	if err := r.other.Lookup(uint32(0), &per); err != nil {
		return 0, fmt.Errorf("afxdp: read the other-frames counter: %w", err)
	}
	var n uint64
	for _, v := range per {
		n += v
	}
	return n, nil
}
