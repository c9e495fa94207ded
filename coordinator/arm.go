package coordinator

import (
	"context"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// arm makes receiver n count the run's streams from now on.
func (st *runState) arm(ctx context.Context, n *node) error {
	resp, err := unary(ctx, st, "arm", n.c.Arm, &lineratev1.ArmRequest{LeaseId: n.lease, Method: st.spec.Method})
	if err != nil {
		return err
	}
	armedInto(n.host, resp)
	return nil
}
