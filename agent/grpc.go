package agent

import (
	"context"
	"time"

	"google.golang.org/grpc"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// The gRPC handlers of lineratev1.AgentServer: each decodes its request
// (convert*.go; a lease id or a flag is passed as it is), calls the
// service's operation and encodes the answer (convert*.go); every error
// becomes a status in toStatus.

func (s *service) Describe(ctx context.Context, req *lineratev1.DescribeRequest) (*lineratev1.DescribeResponse, error) {
	o, err := checkOptionsFromProto(req)
	if err != nil {
		return nil, toStatus(err)
	}
	return describeToProto(s.describe(ctx, o)), nil
}

// Clock answers with its arrival and its departure on this host's
// realtime clock, and the boot id (NTP's t2 and t3; the caller has t1
// and t4).
func (s *service) Clock(context.Context, *lineratev1.ClockRequest) (*lineratev1.ClockResponse, error) {
	in := time.Now()
	boot := s.inv.clock().bootID
	return &lineratev1.ClockResponse{ReceivedUnixNs: in.UnixNano(), BootId: boot, SentUnixNs: time.Now().UnixNano()}, nil
}

func (s *service) AcquireLease(ctx context.Context, req *lineratev1.AcquireLeaseRequest) (*lineratev1.AcquireLeaseResponse, error) {
	var ttl *time.Duration
	if req.CoordinatorId != "" { // a missing coordinator is told first (acquire)
		var err error
		if ttl, err = optDuration(req.Ttl, "ttl"); err != nil {
			return nil, toStatus(err)
		}
	}
	g, err := s.acquire(ctx, req.CoordinatorId, ttl)
	if err != nil {
		return nil, toStatus(err)
	}
	return acquiredToProto(g), nil
}

func (s *service) RenewLease(ctx context.Context, req *lineratev1.RenewLeaseRequest) (*lineratev1.RenewLeaseResponse, error) {
	ttl, err := optDuration(req.Ttl, "ttl")
	if err != nil {
		return nil, toStatus(err)
	}
	g, err := s.renew(ctx, req.LeaseId, ttl)
	if err != nil {
		return nil, toStatus(err)
	}
	return renewedToProto(g), nil
}

func (s *service) ReleaseLease(ctx context.Context, req *lineratev1.ReleaseLeaseRequest) (*lineratev1.ReleaseLeaseResponse, error) {
	r, err := s.release(ctx, req.LeaseId, req.KeepTuning)
	if err != nil {
		return nil, toStatus(err)
	}
	return releasedToProto(r), nil
}

func (s *service) Tune(ctx context.Context, req *lineratev1.TuneRequest) (*lineratev1.TuneResponse, error) {
	o, err := tuneOptionsFromProto(req)
	if err != nil {
		return nil, toStatus(err)
	}
	t, err := s.tune(ctx, req.LeaseId, o)
	if err != nil {
		return nil, toStatus(err)
	}
	return tuningToProto(s.cfg.Iface, t), nil
}

func (s *service) Restore(ctx context.Context, req *lineratev1.RestoreRequest) (*lineratev1.RestoreResponse, error) {
	r, err := s.restore(ctx, req.LeaseId)
	if err != nil {
		return nil, toStatus(err)
	}
	return restoredToProto(s.cfg.Iface, r), nil
}

func (s *service) Arm(ctx context.Context, req *lineratev1.ArmRequest) (*lineratev1.ArmResponse, error) {
	o, err := armOptionsFromProto(req)
	if err != nil {
		return nil, toStatus(err)
	}
	a, err := s.arm(ctx, req.LeaseId, o)
	if err != nil {
		return nil, toStatus(err)
	}
	return armedToProto(a), nil
}

func (s *service) Collect(ctx context.Context, req *lineratev1.CollectRequest) (*lineratev1.CollectResponse, error) {
	rep, irqs, err := s.collect(ctx, req.LeaseId, req.KeepArmed)
	if err != nil {
		return nil, toStatus(err)
	}
	return collectToProto(rep, irqs), nil
}

func (s *service) Configure(ctx context.Context, req *lineratev1.ConfigureRequest) (*lineratev1.ConfigureResponse, error) {
	// The lease, the role and a running send are refused before the
	// configuration is read, as they always were.
	if err := s.mayConfigure(ctx, req.LeaseId); err != nil {
		return nil, toStatus(err)
	}
	cfg, err := senderConfigFromProto(req.Config)
	if err != nil {
		return nil, toStatus(err)
	}
	rtt, err := rttPlanFromProto(req.Rtt)
	if err != nil {
		return nil, toStatus(err)
	}
	c, err := s.configure(ctx, req.LeaseId, cfg, backendFromProto(req.Config), rtt)
	if err != nil {
		return nil, toStatus(err)
	}
	return configuredToProto(c), nil
}

func (s *service) Start(ctx context.Context, req *lineratev1.StartRequest) (*lineratev1.StartResponse, error) {
	at, err := startAtFromProto(req.At)
	if err != nil {
		return nil, toStatus(err)
	}
	started, err := s.start(ctx, req.LeaseId, at)
	if err != nil {
		return nil, toStatus(err)
	}
	return startedToProto(started), nil
}

func (s *service) Stop(ctx context.Context, req *lineratev1.StopRequest) (*lineratev1.StopResponse, error) {
	stopped, at, err := s.stop(ctx, req.LeaseId)
	if err != nil {
		return nil, toStatus(err)
	}
	return stoppedToProto(stopped, at), nil
}

func (s *service) Result(ctx context.Context, req *lineratev1.ResultRequest) (*lineratev1.ResultResponse, error) {
	r, err := s.result(ctx, req.LeaseId, req.Wait)
	if err != nil {
		return nil, toStatus(err)
	}
	return resultToProto(r), nil
}

func (s *service) Watch(req *lineratev1.WatchRequest, stream grpc.ServerStreamingServer[lineratev1.WatchResponse]) error {
	interval, err := optDuration(req.Interval, "interval")
	if err != nil {
		return toStatus(err)
	}
	return toStatus(s.watcher.watch(stream.Context(), interval, func(smp sample) error {
		h, held := s.leases.holder()
		return stream.Send(watchedToProto(smp, h, held))
	}))
}
