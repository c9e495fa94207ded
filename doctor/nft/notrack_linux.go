package nft

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/topology"
)

// TableName is linerate's NOTRACK table, in family inet.
const TableName = "linerate"

// NotrackKey is the NOTRACK table's journal key ("family name").
const NotrackKey = "inet " + TableName

// ErrTableExists is returned when linerate's table is already there: it is
// someone else's (or a run's that was not restored), and a fix must not
// take it over.
var ErrTableExists = errors.New("nftables table inet linerate already exists")

// NotrackSetting is the journal setting of AddNotrack: the table did not
// exist.
func (f *Firewall) NotrackSetting() topology.Setting {
	return topology.Setting{Kind: topology.KindNftTable, Key: NotrackKey, Original: ""}
}

// AddNotrack creates table inet linerate with a chain at prerouting and
// one at output, both at priority raw (-300, before conntrack), each with
// "ip saddr A notrack" and "ip daddr A notrack" (ip6 for IPv6) for every
// address, in one transaction. An existing table is refused and left
// alone.
func (f *Firewall) AddNotrack(addrs []netip.Addr) error {
	if len(addrs) == 0 {
		return errors.New("nftables notrack: no addresses (the run's test addresses are needed)")
	}
	if t, err := f.table(); err != nil {
		return err
	} else if t != nil {
		return fmt.Errorf("nftables notrack: %w: it is not linerate's to change (left alone); if no run of linerate is using it, `linerate doctor --restore` restores a journaled one, or delete it: nft delete table %s", ErrTableExists, NotrackKey)
	}
	t := f.c.CreateTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: TableName})
	for _, h := range []struct {
		name string
		hook *nftables.ChainHook
	}{{"prerouting", nftables.ChainHookPrerouting}, {"output", nftables.ChainHookOutput}} {
		c := f.c.AddChain(&nftables.Chain{Name: h.name, Table: t, Type: nftables.ChainTypeFilter, Hooknum: h.hook, Priority: nftables.ChainPriorityRaw})
		for _, a := range addrs {
			for _, off := range addrOffsets(a) {
				f.c.AddRule(&nftables.Rule{Table: t, Chain: c, Exprs: notrackRule(a, off)})
			}
		}
	}
	if err := f.c.Flush(); err != nil {
		return fmt.Errorf("nftables notrack: create table %s: %w", NotrackKey, err)
	}
	return nil
}

// addrOffsets are the network header offsets of the source and
// destination address of a's family.
func addrOffsets(a netip.Addr) []uint32 {
	if a.Is4() {
		return []uint32{12, 16}
	}
	return []uint32{8, 24}
}

// notrackRule is "ip saddr a notrack" (or daddr, or ip6) as nft compiles
// it in an inet table: the family, the address, notrack.
func notrackRule(a netip.Addr, off uint32) []expr.Any {
	proto := byte(unix.NFPROTO_IPV4)
	if a.Is6() {
		proto = unix.NFPROTO_IPV6
	}
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: uint32(a.BitLen() / 8)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: a.AsSlice()},
		&expr.Notrack{},
	}
}

// table is linerate's table, or nil when there is none.
func (f *Firewall) table() (*nftables.Table, error) {
	t, err := f.c.ListTableOfFamily(TableName, nftables.TableFamilyINet)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nftables: read table %s: %w", NotrackKey, err)
	}
	return t, nil
}

// text is a canonical text of linerate's table ("" when there is none):
// its chains by name, each with its hook, priority and rules in order.
func (f *Firewall) text() (string, error) {
	t, err := f.table()
	if err != nil || t == nil {
		return "", err
	}
	chains, err := f.read()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table %s {", NotrackKey)
	slices.SortFunc(chains, func(x, y chain) int { return strings.Compare(x.c.Name, y.c.Name) })
	for _, ch := range chains {
		if ch.c.Table.Family != t.Family || ch.c.Table.Name != t.Name {
			continue
		}
		fmt.Fprintf(&b, " chain %s {", ch.c.Name)
		if ch.c.Hooknum != nil && ch.c.Priority != nil {
			fmt.Fprintf(&b, " type %s hook %s priority %d;", ch.c.Type, ch.hook, *ch.c.Priority)
		}
		for _, r := range ch.rules {
			fmt.Fprintf(&b, " %s;", r.text)
		}
		b.WriteString(" }")
	}
	b.WriteString(" }")
	return b.String(), nil
}

// Restorer restores topology.KindNftTable settings: the table a fix
// created is deleted.
func (f *Firewall) Restorer() topology.SettingRestorer { return restorer{f} }

type restorer struct{ f *Firewall }

// Current is "" when the table is absent, else its canonical text.
func (r restorer) Current(s topology.Setting) (string, error) {
	if err := r.check(s); err != nil {
		return "", err
	}
	return r.f.text()
}

// Restore deletes the table (its Original is always "": absent).
func (r restorer) Restore(s topology.Setting) error {
	if err := r.check(s); err != nil {
		return err
	}
	if s.Original != "" {
		return fmt.Errorf("nftables restore %s: the journal says it existed before (%q); linerate only deletes tables it created", s.Key, s.Original)
	}
	r.f.c.DelTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: TableName})
	if err := r.f.c.Flush(); err != nil {
		return fmt.Errorf("nftables restore: delete table %s: %w", s.Key, err)
	}
	return nil
}

func (r restorer) check(s topology.Setting) error {
	if s.Kind != topology.KindNftTable || s.Key != NotrackKey {
		return fmt.Errorf("nftables restore: %s %q: only %s %q is linerate's", s.Kind, s.Key, topology.KindNftTable, NotrackKey)
	}
	return nil
}
