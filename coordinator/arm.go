package coordinator

import (
	"context"
	"fmt"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// arm makes receiver n count the run's streams from now on.
func (st *runState) arm(ctx context.Context, n *node) error {
	cctx, cancel := st.call(ctx)
	defer cancel()
	resp, err := n.c.Arm(cctx, &lineratev1.ArmRequest{LeaseId: n.lease, Method: st.spec.Method})
	if err != nil {
		return fmt.Errorf("arm: %w", err)
	}
	armedInto(n.host, resp)
	return nil
}
