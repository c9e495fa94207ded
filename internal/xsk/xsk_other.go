//go:build !linux

package xsk

import (
	"fmt"
	"runtime"
	"time"
)

// Socket is an AF_XDP socket; there are none off Linux.
type Socket struct{}

// Open reports that AF_XDP needs Linux.
func Open(o Options) (*Socket, error) {
	if _, err := o.withDefaults(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("AF_XDP on %s: needs Linux", runtime.GOOS)
}

func (s *Socket) FD() int                                  { return -1 }
func (s *Socket) Options() Options                         { return Options{} }
func (s *Socket) Mode() (Mode, string)                     { return "", "" }
func (s *Socket) NeedWakeup() (bool, string)               { return false, "" }
func (s *Socket) WakeupFallback() error                    { return nil }
func (s *Socket) Frame(addr uint64) []byte                 { return nil }
func (s *Socket) Bytes(addr uint64, n int) []byte          { return nil }
func (s *Socket) FrameAddr(i int) uint64                   { return 0 }
func (s *Socket) NeedsWakeup(r Ring) bool                  { return false }
func (s *Socket) TxReserve(n int) int                      { return 0 }
func (s *Socket) TxSet(i int, addr uint64, length int)     {}
func (s *Socket) TxSubmit(n int)                           {}
func (s *Socket) Complete(addrs []uint64) int              { return 0 }
func (s *Socket) Fill(addrs []uint64) int                  { return 0 }
func (s *Socket) Receive(descs []Desc) int                 { return 0 }
func (s *Socket) Release(n int)                            {}
func (s *Socket) Kick() (bool, error)                      { return false, nil }
func (s *Socket) Wakeup() error                            { return nil }
func (s *Socket) Poll(timeout time.Duration) (bool, error) { return false, nil }
func (s *Socket) SetTxBudget(n int) error                  { return nil }
func (s *Socket) Stats() (Stats, error)                    { return Stats{}, nil }
func (s *Socket) Close() error                             { return nil }
