package pktgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Features are what this kernel's pktgen accepts on a device, found by
// trying (VERSION has said 2.75 for a decade, so versions tell nothing).
type Features struct {
	Version   string `json:"version"`
	Burst     bool   `json:"burst"`      // burst > 1 (xmit_more; needs skb sharing)
	CloneSkb  bool   `json:"clone_skb"`  // clone_skb > 0 (needs skb sharing)
	QueueXmit bool   `json:"queue_xmit"` // xmit_mode queue_xmit (through the qdisc)
	NodeFlag  string `json:"node_flag"`  // "NODE", "NODE_ALLOC" (old kernels) or "" (neither)
}

// Probe attaches dev to the pktgen thread of cpu, tries each feature,
// and resets pktgen afterwards.
func (k *Kernel) Probe(ctx context.Context, dev string, cpu int) (f *Features, err error) {
	k.defaults()
	f = &Features{}
	if f.Version, err = k.Available(); err != nil {
		return nil, err
	}
	if err := k.ctl("reset"); err != nil {
		return nil, fmt.Errorf("reset pktgen: %w", err)
	}
	defer func() {
		if rerr := k.ctl("reset"); rerr != nil && err == nil {
			err = fmt.Errorf("reset pktgen after probing: %w", rerr)
		}
	}()
	entry := fmt.Sprintf("%s@%d", dev, cpu)
	if err := k.clearThread(cpu); err != nil {
		return nil, err
	}
	if err := k.addDevice(ctx, cpu, entry); err != nil {
		return nil, err
	}
	try := func(cmd, undo string) (bool, error) {
		err := k.set(entry, cmd, true)
		switch {
		case err == nil:
			return true, k.set(entry, undo, true)
		case errors.Is(err, ErrNotSupported), errors.Is(err, ErrRefused):
			return false, nil
		}
		return false, err
	}
	if f.Burst, err = try("burst 2", "burst 1"); err != nil {
		return nil, err
	}
	if f.CloneSkb, err = try("clone_skb 1", "clone_skb 0"); err != nil {
		return nil, err
	}
	if f.QueueXmit, err = try("xmit_mode queue_xmit", "xmit_mode start_xmit"); err != nil {
		return nil, err
	}
	for _, name := range []string{"NODE", "NODE_ALLOC"} {
		ok, err := try("flag "+name, "flag !"+name)
		if err != nil {
			return nil, err
		}
		if ok {
			f.NodeFlag = name
			break
		}
	}
	k.Log.Named("pktgen").Debug("probed", "dev", dev, "features", fmt.Sprintf("%+v", *f), "version", strings.TrimSpace(f.Version))
	return f, nil
}
