package coordinator

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// A spec takes every name of each name's one list (a run's backend as an
// agent takes it: userspace too), fills the defaults of those left out,
// and refuses another naming the field and the valid names.
func TestSpecNames(t *testing.T) {
	spec := func(f func(*Spec)) Spec {
		s := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1}
		f(&s)
		return s
	}
	s := spec(func(*Spec) {})
	if err := s.Validate(); err != nil || s.Pattern != Pairwise || s.Backend != pktgen.BackendAuto || s.Method != recv.MethodAuto {
		t.Errorf("defaults: %v, pattern %q, backend %q, method %q", err, s.Pattern, s.Backend, s.Method)
	}
	for _, b := range pktgen.BackendNames {
		if s := spec(func(s *Spec) { s.Backend = b }); s.Validate() != nil {
			t.Errorf("backend %s refused: %v", b, s.Validate())
		}
	}
	for _, m := range recv.Methods {
		if s := spec(func(s *Spec) { s.Method = m }); s.Validate() != nil {
			t.Errorf("method %s refused: %v", m, s.Validate())
		}
	}
	for _, p := range topology.IRQBalancePolicies {
		if s := spec(func(s *Spec) { s.IRQBalance = p }); s.Validate() != nil {
			t.Errorf("irqbalance %s refused: %v", p, s.Validate())
		}
	}
	for _, x := range []pktgen.XmitMode{"", pktgen.XmitStart, pktgen.XmitQueue} {
		for _, b := range []pktgen.BackendName{pktgen.BackendAuto, pktgen.BackendKernel} {
			if s := spec(func(s *Spec) { s.XmitMode, s.Backend = x, b }); s.Validate() != nil {
				t.Errorf("xmit mode %q, backend %s refused: %v", x, b, s.Validate())
			}
		}
	}
	for _, p := range Patterns {
		s := spec(func(s *Spec) { s.Pattern = p })
		if err := s.Validate(); err != nil {
			t.Errorf("pattern %s refused: %v", p, err)
		}
	}
	for _, tc := range []struct {
		f    func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Pattern = "star" }, `pattern "star": valid patterns are pairwise, fan-in, fan-out and mesh`},
		{func(s *Spec) { s.NeedWakeup = "sometimes" }, `need wakeup "sometimes": valid values are auto, on and off`},
		{func(s *Spec) { s.Backend, s.NeedWakeup = pktgen.BackendXDP, pktgen.NeedWakeupOff }, "need wakeup off: an AF_XDP socket's bind flag (the afxdp backend's, the afxdp receiver method's); backend xdp with method auto has none"},
		{func(s *Spec) { s.Backend = "dpdk" }, `backend "dpdk": valid backends are auto, kernel, xdp, afxdp, afpacket and userspace`},
		{func(s *Spec) { s.Method = "pcap" }, `method "pcap": valid receiver methods are auto, xdp, afpacket and afxdp`},
		{func(s *Spec) { s.IRQBalance = "maybe" }, `irqbalance "maybe": valid values are refuse and ignore`},
		{func(s *Spec) { s.XmitMode = "fast" }, `xmit mode "fast": want start_xmit or queue_xmit`},
		{func(s *Spec) { s.XmitMode = pktgen.XmitNetifReceive }, `xmit mode "netif_receive": want start_xmit or queue_xmit (netif_receive injects`},
		{func(s *Spec) { s.XmitMode, s.Backend = pktgen.XmitQueue, pktgen.BackendXDP }, "xmit mode queue_xmit: kernel pktgen only (backend kernel or auto); backend xdp transmits"},
	} {
		s := spec(tc.f)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", s, err, tc.want)
		}
	}
	if _, err := Pairs("star", []string{"a"}, []string{"b"}); err == nil || !strings.Contains(err.Error(), `pattern "star": valid patterns are`) {
		t.Errorf("Pairs of an unknown pattern: %v", err)
	}
}

// need_wakeup on or off is the AF_XDP sockets' at either end: with the
// afxdp method and another backend it is valid, and only the receivers
// are given it; with the afxdp backend only the senders.
func TestSpecNeedWakeupEnds(t *testing.T) {
	for _, tc := range []struct {
		backend          pktgen.BackendName
		method           recv.Method
		sender, receiver pktgen.NeedWakeup
	}{
		{pktgen.BackendXDP, recv.MethodAFXDP, "", pktgen.NeedWakeupOn},
		{pktgen.BackendAFXDP, recv.MethodXDP, pktgen.NeedWakeupOn, ""},
		{pktgen.BackendAFXDP, recv.MethodAFXDP, pktgen.NeedWakeupOn, pktgen.NeedWakeupOn},
	} {
		s := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 1, Backend: tc.backend, Method: tc.method, NeedWakeup: pktgen.NeedWakeupOn}
		if err := s.checkNeedWakeup(); err != nil {
			t.Errorf("backend %s, method %s: %v", tc.backend, tc.method, err)
		}
		if s.senderWakeup() != tc.sender || s.receiverWakeup() != tc.receiver {
			t.Errorf("backend %s, method %s: senders given %q, receivers %q: want %q and %q", tc.backend, tc.method, s.senderWakeup(), s.receiverWakeup(), tc.sender, tc.receiver)
		}
	}
}
