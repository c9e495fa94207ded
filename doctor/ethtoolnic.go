package doctor

import "github.com/linerate/linerate/topology"

// ethtoolRestorer restores one kind of ethtool parameters.
type ethtoolRestorer struct {
	open func(string) (NIC, error)
	kind topology.SettingKind
}

func (r ethtoolRestorer) Current(s topology.Setting) (string, error) { return "", nil } // TODO(helper)
func (r ethtoolRestorer) Restore(s topology.Setting) error           { return nil }     // TODO(helper)

// nicFacts fills the rings, coalescing, pause, offloads and firmware.
func nicFacts(e *env, f *Facts) {} // TODO(helper)
