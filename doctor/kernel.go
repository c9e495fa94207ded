package doctor

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// kernelConfig is the running kernel's build configuration, from
// /boot/config-REL or /proc/config.gz: option → "y", "m" or "n" (is not
// set). from names the file; err says why none could be read.
type kernelConfig struct {
	opts map[string]string
	from string
	err  error
}

func readKernelConfig(e *env) kernelConfig {
	k := kernelConfig{opts: map[string]string{}}
	var data []byte
	name := "/boot/config-" + e.kernel
	b, err := e.h.Root.ReadFile(name)
	if err == nil {
		data = b
	} else {
		gz, gerr := e.h.Root.ReadFile("/proc/config.gz")
		if gerr != nil {
			k.err = fmt.Errorf("%s; %s", unreadable(name, err), unreadable("/proc/config.gz", gerr))
			return k
		}
		name = "/proc/config.gz"
		zr, zerr := gzip.NewReader(bytes.NewReader(gz))
		if zerr == nil {
			data, zerr = io.ReadAll(io.LimitReader(zr, 16<<20))
		}
		if zerr != nil {
			k.err = fmt.Errorf("%s: %v", name, zerr)
			return k
		}
	}
	k.from = name
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if opt, ok := strings.CutPrefix(line, "# "); ok {
			if o, ok := strings.CutSuffix(opt, " is not set"); ok {
				k.opts[o] = "n"
			}
			continue
		}
		if o, v, ok := strings.Cut(line, "="); ok {
			k.opts[o] = v
		}
	}
	return k
}

// say is "CONFIG_X=y (from)" or why it is unknown.
func (k kernelConfig) say(opt string) string {
	if k.err != nil {
		return fmt.Sprintf("%s: unknown (%v)", opt, k.err)
	}
	v, ok := k.opts[opt]
	switch {
	case !ok:
		return fmt.Sprintf("%s: absent from %s", opt, k.from)
	case v == "n":
		return fmt.Sprintf("%s: not set (%s)", opt, k.from)
	}
	return fmt.Sprintf("%s=%s (%s)", opt, v, k.from)
}

// on is true or false when the config says, and known false otherwise.
func (k kernelConfig) on(opt string) (on, known bool) {
	if k.err != nil {
		return false, false
	}
	v := k.opts[opt]
	return v == "y" || v == "m", true
}

// kernelAtLeast compares a release ("6.1.0-27-cloud-amd64") with major.minor.
func kernelAtLeast(rel string, major, minor int) (ok, known bool) {
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	digits := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(parts[1])
	}
	min, err2 := strconv.Atoi(parts[1][:digits])
	if err1 != nil || err2 != nil {
		return false, false
	}
	return maj > major || maj == major && min >= minor, true
}

// wants is true when the run's sender (Options.Backend) may use backend:
// every one when none was named, or "auto" was; "userspace" is the
// userspace engines.
func (e *env) wants(backend pktgen.BackendName) (wanted, named bool) {
	switch e.o.Backend {
	case "", pktgen.BackendAuto:
		return true, false
	case pktgen.BackendUserspace:
		return backend != pktgen.BackendKernel, true
	}
	return e.o.Backend == backend, true
}

// wantsMethod is true when the run's receiver (Options.Method) may count
// with m: every method when none was named, or "auto" was.
func (e *env) wantsMethod(m receiver.Method) (wanted, named bool) {
	if e.o.Method == "" || e.o.Method == receiver.MethodAuto {
		return true, false
	}
	return e.o.Method == m, true
}

const kernelWhy = "Kernel pktgen is the reference sender (the rate and the count the kernel keeps itself); without it a run falls back to a userspace engine " +
	"that sends fewer packets per CPU, and a receiver without XDP counts in AF_PACKET rings after the stack has spent an skb per packet."

// checkKernel: the kernel features each backend of the role needs.
func checkKernel(e *env) Check {
	c := Check{Title: "kernel features of the backends", Why: kernelWhy, Status: Pass}
	if e.kernel == "" {
		c.Status = Warn
		c.Evidence = append(c.Evidence, e.evidence("/proc/sys/kernel/osrelease"))
		return c
	}
	c.Evidence = append(c.Evidence, "/proc/sys/kernel/osrelease: "+e.kernel)
	cfg := readKernelConfig(e)
	var features []string
	var featErr error
	if e.h.XDPFeatures != nil {
		features, featErr = e.h.XDPFeatures(e.o.Iface)
		if featErr == nil {
			c.Evidence = append(c.Evidence, fmt.Sprintf("xdp-features of %s (netdev netlink): %s", e.o.Iface, strings.Join(features, " ")))
		} else {
			c.Evidence = append(c.Evidence, fmt.Sprintf("xdp-features of %s: not readable (%v)", e.o.Iface, featErr))
		}
	} else {
		c.Evidence = append(c.Evidence, fmt.Sprintf("xdp-features of %s: not read on this host root", e.o.Iface))
	}
	haveFeature := func(f string) (ok, known bool) {
		if e.h.XDPFeatures == nil || featErr != nil {
			return false, false
		}
		return slices.Contains(features, f), true
	}
	var fixes []string
	// A backend the run named and the kernel cannot run is a FAIL; one
	// "auto" would only have tried is evidence: auto takes the next, and
	// there is nothing to act on.
	miss := func(named bool, what, fix string) {
		c.Evidence = append(c.Evidence, what)
		if !named {
			return
		}
		c.Status = Fail
		if fix != "" {
			fixes = append(fixes, fix)
		}
	}
	bpf, bpfKnown := cfg.on("CONFIG_BPF_SYSCALL")
	if e.o.Role.sends() {
		if want, named := e.wants(pktgen.BackendKernel); want {
			switch ok, how := pktgenPresent(e, cfg); {
			case ok:
				c.Evidence = append(c.Evidence, "kernel pktgen: "+how)
			default:
				miss(named, "kernel pktgen: not available ("+how+"): the sender falls back to a userspace engine (xdp live frames, else afpacket)",
					"install the kernel's pktgen module (CONFIG_NET_PKTGEN=m; on Debian and Ubuntu it is in linux-modules-extra or the full linux-image), then modprobe pktgen")
			}
		}
		if want, named := e.wants(pktgen.BackendXDP); want {
			at, known := kernelAtLeast(e.kernel, 5, 18)
			xmit, xmitKnown := haveFeature("ndo-xmit")
			switch {
			case known && !at:
				miss(named, fmt.Sprintf("xdp live frames: kernel %s is older than 5.18 (BPF_F_TEST_XDP_LIVE_FRAMES)", e.kernel), "")
			case bpfKnown && !bpf:
				miss(named, "xdp live frames: "+cfg.say("CONFIG_BPF_SYSCALL"), "")
			case xmitKnown && !xmit:
				miss(named, fmt.Sprintf("xdp live frames: %s cannot transmit XDP frames (no ndo-xmit in its xdp-features)", e.o.Iface), "")
			case !known:
				c.Evidence = append(c.Evidence, fmt.Sprintf("xdp live frames: kernel %s: release not parsed, its version not judged", e.kernel))
			default:
				c.Evidence = append(c.Evidence, fmt.Sprintf("xdp live frames: kernel %s ≥ 5.18", e.kernel))
			}
		}
	}
	if e.o.Role.receives() {
		if want, named := e.wantsMethod(receiver.MethodXDP); want {
			basic, basicKnown := haveFeature("basic")
			switch {
			case bpfKnown && !bpf:
				miss(named, "receiver XDP: "+cfg.say("CONFIG_BPF_SYSCALL")+": the receiver counts in AF_PACKET rings", "")
			case basicKnown && !basic:
				// The receiver still counts with XDP, in generic mode
				// (receiver/xdp_linux.go falls back to it): slower, not
				// impossible, so a named xdp method is a WARN.
				c.Evidence = append(c.Evidence, fmt.Sprintf("receiver XDP: %s has no native XDP (no basic in its xdp-features): the program runs in generic mode, after an skb is built for each packet", e.o.Iface))
				if named && c.Status == Pass {
					c.Status = Warn
				}
				if named {
					fixes = append(fixes, "count on a NIC whose driver runs XDP natively (its xdp-features list basic); on "+e.o.Iface+" the receiver counts in generic mode")
				}
			default:
				c.Evidence = append(c.Evidence, "receiver XDP: "+cfg.say("CONFIG_BPF_SYSCALL"))
			}
		}
	}
	// No backend uses AF_XDP yet: what the kernel offers is a fact, not a
	// verdict.
	c.Evidence = append(c.Evidence, "AF_XDP (no backend uses it yet): "+cfg.say("CONFIG_XDP_SOCKETS"))
	if zc, known := haveFeature("xsk-zerocopy"); known {
		c.Evidence = append(c.Evidence, fmt.Sprintf("AF_XDP zero copy on %s: %v", e.o.Iface, zc))
	}
	c.Fix = strings.Join(fixes, "\n")
	return c
}

// pktgenPresent says whether kernel pktgen is loaded or loadable, and how
// it knows.
func pktgenPresent(e *env, cfg kernelConfig) (bool, string) {
	if _, err := e.h.Root.Stat("/proc/net/pktgen"); err == nil {
		return true, "/proc/net/pktgen present (loaded)"
	}
	for _, m := range topology.PktgenModules {
		name := fmt.Sprintf("/lib/modules/%s/kernel/net/core/%s", e.kernel, m)
		if _, err := e.h.Root.Stat(name); err == nil {
			return true, name + " present (loadable)"
		}
	}
	return false, fmt.Sprintf("no /proc/net/pktgen, no pktgen.ko under /lib/modules/%s/kernel/net/core, %s", e.kernel, cfg.say("CONFIG_NET_PKTGEN"))
}
