//go:build linux && traffic

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
	"github.com/linerate/linerate/receiver"
)

// startRecv runs `linerate recv` in h's namespace and returns when it is armed.
func startRecv(t *testing.T, bin string, h *lab.Host, method string) (wait func() *receiver.Report) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", h.NS.Name, bin, "recv", "--iface", "data0",
		"--method", method, "--until-idle", "1500ms", "--clock", "same-host", "--json")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	armed := make(chan bool, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "armed: counting") {
				armed <- true
			}
		}
		close(armed)
	}()
	if ok := <-armed; !ok {
		cancel()
		cmd.Wait()
		t.Fatalf("recv never armed:\n%s", log.String())
	}
	return func() *receiver.Report {
		defer cancel()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("recv: %v\n%s", err, log.String())
		}
		var r receiver.Report
		if err := json.Unmarshal([]byte(stdout.String()), &r); err != nil {
			t.Fatalf("recv JSON: %v\n%s", err, stdout.String())
		}
		return &r
	}
}

func runSend(t *testing.T, bin string, s, r *lab.Host, backend string, count, threads int) *pktgen.Summary {
	t.Helper()
	cpus := "0"
	if threads > 1 {
		cpus = fmt.Sprintf("0-%d", threads-1)
	}
	out, err := exec.Command("ip", "netns", "exec", s.NS.Name, bin, "send", "--iface", "data0", "--dst", r.Addr().String(),
		"--dst-mac", r.Data.MAC.String(), "--src", fmt.Sprintf("198.18.%d.1", 10+s.Index()), "--count", fmt.Sprint(count),
		"--cpus", cpus, "--backend", backend, "--json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errorsAs(err, &ee) {
			t.Fatalf("send: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var sum pktgen.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("send JSON: %v\n%s", err, out)
	}
	return &sum
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*ee = e
	}
	return ok
}

// TestEndToEndExact sends with each userspace backend over T threads
// through the lab's switch and counts with each receiver method: every
// stream's received + lost == sent, no duplicates, and every lost packet
// one the switch's ports counted as dropped (unpaced, two threads over
// two busy CPUs overflow a veth's ring now and then: CI saw 1 of 40 001).
func TestEndToEndExact(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	l, err := lab.Up(lab.Spec{Name: fmt.Sprintf("e%d", os.Getpid()), Senders: 1, Receivers: 1, Queues: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	s, r := l.Senders[0], l.Receivers[0]
	const count, threads = 40001, 2
	for _, backend := range []string{"xdp", "afpacket"} {
		for _, method := range []string{"xdp", "afpacket"} {
			t.Run(backend+"-to-"+method, func(t *testing.T) {
				if backend == "xdp" {
					pktgentest.SkipUnlessLiveFrames(t)
				}
				before, err := l.Truth()
				if err != nil {
					t.Fatal(err)
				}
				wait := startRecv(t, bin, r, method)
				sum := runSend(t, bin, s, r, backend, count, threads)
				rep := wait()
				after, err := l.Truth()
				if err != nil {
					t.Fatal(err)
				}
				if sum.Packets != count || sum.Errors != 0 || sum.Backend != backend {
					t.Fatalf("sent %+v", sum)
				}
				if string(rep.Method) != method || len(rep.Streams) != threads {
					t.Fatalf("received with %s, %d streams: %+v", rep.Method, len(rep.Streams), rep)
				}
				var lost uint64
				for i, st := range rep.Streams {
					want := sum.Threads[0].Packets
					if st.Src.String() == sum.Threads[1].Src {
						want = sum.Threads[1].Packets
					}
					// What did not arrive is missing, inside the stream
					// or at its tail (max_seq short of it).
					if st.Received > want || st.Duplicates != 0 || st.Missing+(want-st.MaxSeq) != want-st.Received || st.MaxSeq > want {
						t.Errorf("stream %d %s: received %d max_seq %d missing %d dup %d; sent %d", i, st.Src, st.Received, st.MaxSeq, st.Missing, st.Duplicates, want)
					}
					lost += want - min(want, st.Received)
					// Every packet timed, on this host's one clock: never
					// before its send time, never absurd.
					if l := st.Latency; l == nil || l.Samples() != st.Received || l.Negative != 0 || l.Absurd != 0 || l.Clock != latency.SameHost {
						t.Errorf("stream %d %s: latency %+v over %d packets", i, st.Src, l, st.Received)
					} else {
						t.Logf("stream %d %s: latency %+v", i, st.Src, l.Summary())
					}
				}
				if rep.TestPackets()+lost != count {
					t.Errorf("receiver counted %d test packets and %d lost, sent %d", rep.TestPackets(), lost, count)
				}
				lostAreDrops(t, backend+" to "+method, lost, after.Sub(before).Drops())
			})
		}
	}
}

// TestEndToEndInjectedLoss drops every 1000th test packet on the switch
// port: the receiver's missing sequences are exactly the dropped ones.
func TestEndToEndInjectedLoss(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := Binary(t)
	const every = 1000
	l, err := lab.Up(lab.Spec{Name: fmt.Sprintf("l%d", os.Getpid()), Senders: 1, Receivers: 1, Loss: lab.Loss{Every: every}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	s, r := l.Senders[0], l.Receivers[0]
	for _, backend := range []string{"xdp", "afpacket"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "xdp" {
				pktgentest.SkipUnlessLiveFrames(t)
			}
			before, _ := s.Port.Stats()
			wait := startRecv(t, bin, r, "xdp")
			const count = 25500
			sum := runSend(t, bin, s, r, backend, count, 1)
			rep := wait()
			after, _ := s.Port.Stats()
			dropped := after.Dropped - before.Dropped
			wantDrops := (before.Test+count)/every - before.Test/every
			if sum.Packets != count || dropped != wantDrops || after.Test-before.Test != count || len(rep.Streams) != 1 {
				t.Fatalf("sent %d, port saw %d and dropped %d (want %d), streams %d", sum.Packets, after.Test-before.Test, dropped, wantDrops, len(rep.Streams))
			}
			st := rep.Streams[0]
			// A drop of the very last packet is tail loss: max_seq tells it.
			tail := uint64(count) - uint64(st.MaxSeq)
			if st.Received != count-dropped || st.Missing+tail != dropped || st.Duplicates != 0 {
				t.Errorf("received %d missing %d (+%d tail) dup %d; want %d received, %d lost", st.Received, st.Missing, tail, st.Duplicates, count-dropped, dropped)
			}
			// The port counts its test packets from when it was attached:
			// the k-th it saw is dropped, so this run's drops sit at
			// sequences k·every − before.Test.
			var want [][2]uint64
			for n := (before.Test/every + 1) * every; n <= after.Test; n += every {
				if seq := n - before.Test; seq <= st.MaxSeq {
					want = append(want, [2]uint64{seq, seq})
				}
			}
			got := fmt.Sprint(st.MissingRanges)
			if len(want) > 16 {
				want = want[:16]
			}
			if exp := fmt.Sprint(want); got != exp {
				t.Errorf("missing ranges %s, want exactly the dropped sequences %s", got, exp)
			}
		})
	}
}
