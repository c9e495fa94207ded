package live

import (
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/topology"
)

// Host is a placeholder until the integration branch lands.
func Host(root *topology.DirRoot, rootName string) doctor.Host {
	return doctor.Host{Root: root, RootName: rootName}
}
