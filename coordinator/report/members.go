package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/linerate/linerate/coordinator"
)

// Members writes the agents of a cluster (`linerate members`): a row per
// agent with its role, status, addresses, NIC and health.
func Members(w io.Writer, ms []coordinator.Member) error {
	tw := newTab(w, 0)
	fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tGRPC\tIFACE\tNUMA\tQUEUES\tSPEED\tBACKENDS\tVERSION\tHEALTH")
	for _, m := range ms {
		speed := "-"
		if m.SpeedMbps > 0 {
			speed = fmt.Sprintf("%dMb/s", m.SpeedMbps)
		}
		health := m.Health
		if health == "" {
			health = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", m.Name, m.Role, m.Status, m.GRPC, m.Iface, m.NUMA, m.Queues, speed, strings.Join(m.Backends, ","), m.Version, health)
	}
	return tw.Flush()
}
