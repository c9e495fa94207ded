package agent

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Another agent's certificate (agent2, same CA) may Describe the agent —
// a sender confirming a receiver — and nothing else: every other method
// of the Agent service is PermissionDenied naming the caller, and the
// host is left as it was. A coordinator's certificate may still call
// them.
func TestAgentPeerMayOnlyDescribe(t *testing.T) {
	a, coord, root, _ := fixtureAgent(t, 0)
	irqs := func() (s string) {
		for irq := 42; irq <= 45; irq++ {
			s += affinity(t, root, irq)
		}
		return s
	}
	before := irqs()
	conn := dialAs(t, a, a.cfg.TLSDir, "agent2")
	ctx := ctxT(t, 10*time.Second)
	d, err := lineratev1.NewAgentClient(conn).Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil || d.GetNic().GetMac() == "" {
		t.Fatalf("Describe from another agent: %v, %v", d, err)
	}
	refused := func(method string, err error) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `agent "agent2"`) || !strings.Contains(err.Error(), "coordinator's certificate") {
			t.Errorf("%s from another agent: %v; want PermissionDenied naming agent2 and what it takes", method, err)
		}
	}
	desc := lineratev1.Agent_ServiceDesc
	for _, m := range desc.Methods {
		if m.MethodName == "Describe" {
			continue
		}
		full := "/" + desc.ServiceName + "/" + m.MethodName
		refused(full, conn.Invoke(ctx, full, &emptypb.Empty{}, &emptypb.Empty{}))
	}
	for i, s := range desc.Streams {
		full := "/" + desc.ServiceName + "/" + s.StreamName
		st, err := conn.NewStream(ctx, &desc.Streams[i], full)
		if err == nil {
			_ = st.SendMsg(&emptypb.Empty{})
			_ = st.CloseSend()
			err = st.RecvMsg(&emptypb.Empty{})
		}
		refused(full, err)
	}
	if irqs() != before {
		t.Error("a refused call changed the host's IRQ affinity")
	}
	if _, err := coord.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"}); err != nil {
		t.Errorf("the coordinator's AcquireLease: %v", err)
	}
}
