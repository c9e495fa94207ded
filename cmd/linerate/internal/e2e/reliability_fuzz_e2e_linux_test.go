//go:build linux && traffic

package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// TestReliabilityFuzzRequests sends every Agent request type, its fields
// random and edge values (a real lease id most of the time, so that the
// calls get past the lease), over mutual TLS to the live sender and
// receiver agents of a 1 → 1 lab: no call may panic the agent (Internal
// or Unknown), hang (a 5 s deadline; a Result that waits and a Watch
// excepted) or leave it unable to serve; every refusal is a status whose
// message names a field of the request. At the end the hosts are as
// before. Prints the counts per request type.
func TestReliabilityFuzzRequests(t *testing.T) {
	perMethod := relN(t, 2) * 15
	r := startRelLab(t, "rd", 1, 1)
	senders, receivers := r.hostNames()
	hosts := []string{senders[0], receivers[0]}
	pids := map[string]int{}
	conns := map[string]*grpc.ClientConn{}
	clients := map[string]lineratev1.AgentClient{}
	for _, h := range hosts {
		pids[h] = r.lab.Agent(h).Cmd.Process.Pid
		conns[h] = r.conn(h)
		clients[h] = lineratev1.NewAgentClient(conns[h])
	}
	leases := leaseKeeper{}
	unnamed := 0 // InvalidArgument or OutOfRange naming no field
	before := r.state()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	t.Logf("seed time %d", time.Now().UnixNano())
	svc := lineratev1.File_linerate_v1_agent_proto.Services().ByName("Agent")
	type tally struct {
		calls, ok, named, crashes int
		codes                     map[codes.Code]int
	}
	counts := map[string]*tally{}
	for i := 0; i < svc.Methods().Len(); i++ {
		m := svc.Methods().Get(i)
		tl := &tally{codes: map[codes.Code]int{}}
		counts[string(m.Name())] = tl
		for k := range perMethod {
			host := hosts[k%2]
			lease := leases.lease(t, clients[host])
			req := newMessage(t, m.Input())
			f := fuzzer{rng: rng, lease: lease}
			f.fill(req.ProtoReflect(), 0)
			err := fuzzCall(conns[host], m, req)
			tl.calls++
			st, _ := status.FromError(err)
			switch {
			case err == nil:
				tl.ok++
				continue
			case st.Code() == codes.DeadlineExceeded && (m.Name() == "Watch" || m.Name() == "Result"):
				tl.codes[st.Code()]++
				continue
			case st.Code() == codes.Unavailable && exited(r.lab.Agent(host)):
				// A crash: on record, and the agent started again so that
				// the other request types are fuzzed too.
				t.Errorf("%s crashed agent %s: %v\nrequest %v\nlog: %s", m.Name(), host, err, req, tail(r.lab.Agent(host).Log, 15))
				tl.crashes++
				if _, err := r.lab.Restart(context.Background(), host, r.opts); err != nil {
					t.Fatal(err)
				}
				conns[host] = r.conn(host)
				clients[host] = lineratev1.NewAgentClient(conns[host])
				pids[host] = r.lab.Agent(host).Cmd.Process.Pid
				continue
			case st.Code() == codes.Internal || st.Code() == codes.Unknown || st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded:
				t.Errorf("%s to %s: %v\nrequest %v", m.Name(), host, err, req)
			case namesField(st.Message(), m.Input()):
				tl.named++
			case st.Code() == codes.InvalidArgument || st.Code() == codes.OutOfRange:
				unnamed++
				t.Errorf("%s to %s: %s: the message names no field of %s: %q\nrequest %v", m.Name(), host, st.Code(), m.Input().Name(), st.Message(), req)
			}
			tl.codes[st.Code()]++
		}
	}
	// Still serving, the same processes, and freed: the hosts as before.
	for _, h := range hosts {
		c := clients[h]
		if _, err := c.Stop(context.Background(), &lineratev1.StopRequest{LeaseId: leases.lease(t, c)}); err != nil {
			t.Logf("stop %s: %v", h, err)
		}
		if _, err := c.ReleaseLease(context.Background(), &lineratev1.ReleaseLeaseRequest{LeaseId: leases.lease(t, c)}); err != nil {
			t.Errorf("release %s: %v", h, err)
		}
		if r.lab.Agent(h).Exited() || r.lab.Agent(h).Cmd.Process.Pid != pids[h] {
			t.Errorf("agent %s is not the process the fuzzing began with", h)
		}
	}
	if _, ok := waitFor(10*time.Second, func() bool { return r.state() == before }); !ok {
		t.Errorf("hosts not as before the fuzzing:\n%s\nwant\n%s", r.state(), before)
	}
	if r.sending(senders[0]) {
		t.Errorf("%s still sends after its lease was released", senders[0])
	}
	var names []string
	total, crashes := 0, 0
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tl := counts[n]
		total += tl.calls
		var cs []string
		for c, k := range tl.codes {
			cs = append(cs, fmt.Sprintf("%s %d", c, k))
		}
		sort.Strings(cs)
		crashes += tl.crashes
		figure(t, "%-12s %4d calls: %4d accepted, %d crashed the agent, refused: %s (%d naming a field)", n, tl.calls, tl.ok, tl.crashes, strings.Join(cs, ", "), tl.named)
	}
	figure(t, "%d fuzzed requests over %d request types (mutual TLS, the lab's coordinator certificate, sender and receiver agents): %d crashed an agent, %d InvalidArgument/OutOfRange refusals named no field of the request; agents serving and hosts as before at the end", total, len(names), crashes, unnamed)
}

// leaseKeeper holds the fuzzer's lease on each agent, acquired again
// when a fuzzed call released it (or it ran out): the agent shows no
// lease.
type leaseKeeper map[lineratev1.AgentClient]string

func (k leaseKeeper) lease(t *testing.T, c lineratev1.AgentClient) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if d.GetLease() != nil && k[c] != "" {
		return k[c]
	}
	resp, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "reliability-fuzz", Ttl: durationpb.New(time.Minute)})
	if err != nil {
		t.Fatalf("acquire the fuzzer's lease: %v", err)
	}
	k[c] = resp.LeaseId
	return resp.LeaseId
}

func newMessage(t *testing.T, d protoreflect.MessageDescriptor) protoreflect.ProtoMessage {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	if err != nil {
		t.Fatal(err)
	}
	return mt.New().Interface()
}

// fuzzCall calls method m with req: unary, or the first message of a
// server stream; 5 s at most.
func fuzzCall(conn *grpc.ClientConn, m protoreflect.MethodDescriptor, req protoreflect.ProtoMessage) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	name := fmt.Sprintf("/%s/%s", m.Parent().FullName(), m.Name())
	resp, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
	if err != nil {
		return err
	}
	if !m.IsStreamingServer() {
		return conn.Invoke(ctx, name, req, resp.New().Interface())
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, name)
	if err != nil {
		return err
	}
	if err := s.SendMsg(req); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	return s.RecvMsg(resp.New().Interface())
}

// fuzzer fills messages with random and edge values.
type fuzzer struct {
	rng   *rand.Rand
	lease string
}

var (
	fuzzInts    = []int64{0, 1, -1, 2, 3, 7, 63, 64, 65, 1000, 65536, 70000, 1 << 31, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	fuzzStrings = []string{"", "data0", "eth0", "lo", "../../etc/passwd", "x", strings.Repeat("a", 5000), "\x00", "ü\u202e", "198.18.0.1", "0.0.0.0/0",
		"ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "auto", "xdp", "kernel", "afpacket", "refuse", "ignore", "-1", "1e10"}
)

func (f *fuzzer) fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if f.rng.IntN(4) == 0 {
			continue
		}
		if fd.Name() == "lease_id" && f.rng.IntN(10) < 7 {
			m.Set(fd, protoreflect.ValueOfString(f.lease))
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range f.rng.IntN(3) {
				k, v := f.scalar(fd.MapKey()), f.scalar(fd.MapValue())
				if k.IsValid() && v.IsValid() {
					mp.Set(k.MapKey(), v)
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range f.rng.IntN(5) {
				if fd.Kind() == protoreflect.MessageKind {
					if depth < 3 {
						e := l.NewElement()
						f.fill(e.Message(), depth+1)
						l.Append(e)
					}
				} else if v := f.scalar(fd); v.IsValid() {
					l.Append(v)
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if depth < 3 {
				f.fill(m.Mutable(fd).Message(), depth+1)
			}
		default:
			if v := f.scalar(fd); v.IsValid() {
				m.Set(fd, v)
			}
		}
	}
}

func (f *fuzzer) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	n := fuzzInts[f.rng.IntN(len(fuzzInts))]
	if f.rng.IntN(3) == 0 {
		n = f.rng.Int64N(100000) - 1000
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(f.rng.IntN(2) == 0)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{0, -1, float32(math.NaN()), float32(math.Inf(1)), 1e30, float32(n)}[f.rng.IntN(6)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, -1, math.NaN(), math.Inf(1), 1e300, float64(n)}[f.rng.IntN(6)])
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fuzzStrings[f.rng.IntN(len(fuzzStrings))])
	case protoreflect.BytesKind:
		b := make([]byte, f.rng.IntN(20))
		for i := range b {
			b[i] = byte(f.rng.IntN(256))
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if f.rng.IntN(4) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n))
		}
		return protoreflect.ValueOfEnum(vals.Get(f.rng.IntN(vals.Len())).Number())
	}
	return protoreflect.Value{}
}

// namesField reports whether a refusal's message names a field of the
// request (at any depth), as proto_name, "proto name" or jsonName.
func namesField(msg string, d protoreflect.MessageDescriptor) bool {
	lower := strings.ToLower(msg)
	seen := map[protoreflect.FullName]bool{}
	var walk func(d protoreflect.MessageDescriptor) bool
	walk = func(d protoreflect.MessageDescriptor) bool {
		if seen[d.FullName()] {
			return false
		}
		seen[d.FullName()] = true
		fields := d.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			name := string(fd.Name())
			for _, form := range []string{name, strings.ReplaceAll(name, "_", " "), strings.ReplaceAll(name, "_", "-"), strings.ToLower(fd.JSONName())} {
				if strings.Contains(lower, form) {
					return true
				}
			}
			if fd.Kind() == protoreflect.MessageKind && walk(fd.Message()) {
				return true
			}
		}
		return false
	}
	return walk(d)
}

// exited reports whether a's process ends within 2 s.
func exited(a *lab.Agent) bool {
	_, ok := waitFor(2*time.Second, a.Exited)
	return ok
}
