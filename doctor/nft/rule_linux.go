package nft

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// rule is what one rule does, as the checks judge it: its text in nft's
// words, whether it makes the kernel track connections, whether it
// untracks, what it does to a packet it matches, and what it matches.
type rule struct {
	text    string
	tracks  bool     // a ct expression, nat, an xt conntrack match or CT target
	notrack bool     // a notrack statement
	acts    []string // drop, reject, queue, rewrites (snat, masquerade, payload set...)
	jumps   []string // chains it jumps or goes to
	addrs   []addrMatch
	// other is true when the rule matches on something other than an
	// address or the protocol family (a port, an interface, a mark):
	// it then covers only part of the traffic to an address.
	other bool
	// v4, v6 restrict the rule to one family (meta nfproto, an ip or ip6
	// header field).
	v4, v6 bool
}

// addrMatch is one address condition: ip/ip6 saddr or daddr against a
// value, prefix, range or set.
type addrMatch struct {
	v6      bool
	field   string // "saddr" or "daddr"
	neg     bool
	ranges  []addrRange
	unknown bool // a set that could not be read: admits nothing known
}

// addrRange is [from, to], both included.
type addrRange struct{ from, to netip.Addr }

// admits is true when a packet with a in the matched field passes the
// condition.
func (m addrMatch) admits(a netip.Addr) bool {
	if a.Is4() == m.v6 {
		return false
	}
	in := false
	for _, r := range m.ranges {
		if r.from.Compare(a) <= 0 && a.Compare(r.to) <= 0 {
			in = true
			break
		}
	}
	if m.unknown {
		return false
	}
	return in != m.neg
}

// family is true when the rule can match a packet of a's family.
func (r rule) family(fam nftables.TableFamily, a netip.Addr) bool {
	switch {
	case fam == nftables.TableFamilyIPv4 || r.v4:
		return a.Is4()
	case fam == nftables.TableFamilyIPv6 || r.v6:
		return a.Is6()
	}
	return fam == nftables.TableFamilyINet || fam == nftables.TableFamilyBridge || fam == nftables.TableFamilyNetdev
}

// covers is true when the rule matches every packet from or to a: no
// other condition than addresses and the family, and each address
// condition admits a.
func (r rule) covers(fam nftables.TableFamily, a netip.Addr) bool {
	if r.other || !r.family(fam, a) {
		return false
	}
	for _, m := range r.addrs {
		if !m.admits(a) {
			return false
		}
	}
	return true
}

// touches is true when the rule can match traffic among addrs: each of
// its address conditions admits one of them (with no addrs, every rule
// can).
func (r rule) touches(fam nftables.TableFamily, addrs []netip.Addr) bool {
	if len(addrs) == 0 {
		return true
	}
	fits := false
	for _, a := range addrs {
		if r.family(fam, a) {
			fits = true
		}
	}
	if !fits {
		return false
	}
	for _, m := range r.addrs {
		if !slices.ContainsFunc(addrs, m.admits) {
			return false
		}
	}
	return true
}

// operand is what a register holds: a field a rule loaded.
type operand struct {
	name string // nft's name of the field ("ip saddr", "ct state")
	kind kind
	v6   bool
	mask []byte // a bitwise mask applied to it
}

type kind int

const (
	kindOther kind = iota
	kindAddr
	kindCtState
	kindL4Proto
	kindNFProto
	kindIfname
	kindPort
)

// setReader reads a set's elements for a lookup.
type setReader func(name string) (*nftables.Set, []nftables.SetElement, error)

// parseRule reads a rule's expressions into what it does, rendering them
// in nft's words as far as it knows them (an expression it does not know
// is shown by its type).
func parseRule(fam nftables.TableFamily, exprs []expr.Any, sets setReader) rule {
	var r rule
	var words []string
	regs := map[uint32]operand{}
	for _, e := range exprs {
		switch x := e.(type) {
		case *expr.Payload:
			if x.OperationType == expr.PayloadWrite {
				words = append(words, fmt.Sprintf("%s set", payloadName(fam, x).name))
				r.acts = append(r.acts, "payload write")
				continue
			}
			regs[x.DestRegister] = payloadName(fam, x)
		case *expr.Meta:
			if x.SourceRegister {
				words = append(words, fmt.Sprintf("meta %s set", metaName(x.Key)))
				continue
			}
			o := operand{name: "meta " + metaName(x.Key)}
			switch x.Key {
			case expr.MetaKeyL4PROTO:
				o.kind = kindL4Proto
			case expr.MetaKeyNFPROTO:
				o.kind = kindNFProto
			case expr.MetaKeyIIFNAME, expr.MetaKeyOIFNAME:
				o.kind, o.name = kindIfname, metaName(x.Key)
			}
			regs[x.Register] = o
		case *expr.Ct:
			r.tracks = true
			if x.SourceRegister {
				words = append(words, fmt.Sprintf("ct %s set", ctName(x.Key)))
				continue
			}
			o := operand{name: "ct " + ctName(x.Key)}
			if x.Key == expr.CtKeySTATE {
				o.kind = kindCtState
			}
			regs[x.Register] = o
		case *expr.Bitwise:
			o := regs[x.SourceRegister]
			o.mask = x.Mask
			regs[x.DestRegister] = o
		case *expr.Cmp:
			o := regs[x.Register]
			words = append(words, r.compare(o, x))
		case *expr.Range:
			o := regs[x.Register]
			op := ""
			if x.Op == expr.CmpOpNeq {
				op = "!= "
			}
			words = append(words, fmt.Sprintf("%s %s%s-%s", o.name, op, value(o, x.FromData), value(o, x.ToData)))
			if o.kind == kindAddr {
				from, _ := addrOf(x.FromData)
				to, _ := addrOf(x.ToData)
				r.addrs = append(r.addrs, addrMatch{v6: o.v6, field: field(o), neg: x.Op == expr.CmpOpNeq, ranges: []addrRange{{from, to}}})
			} else {
				r.other = true
			}
		case *expr.Lookup:
			o := regs[x.SourceRegister]
			words = append(words, r.lookup(o, x, sets))
		case *expr.Immediate:
			regs[x.Register] = operand{name: fmt.Sprintf("%x", x.Data)}
		case *expr.Verdict:
			words = append(words, verdictText(x))
			switch x.Kind {
			case expr.VerdictDrop:
				r.acts = append(r.acts, "drop")
			case expr.VerdictQueue:
				r.acts = append(r.acts, "queue")
			case expr.VerdictJump, expr.VerdictGoto:
				r.jumps = append(r.jumps, x.Chain)
			}
		case *expr.Notrack:
			r.notrack = true
			words = append(words, "notrack")
		case *expr.Counter:
			words = append(words, "counter")
		case *expr.Log:
			words = append(words, "log")
		case *expr.Limit:
			words = append(words, "limit")
		case *expr.Reject:
			words = append(words, "reject")
			r.acts = append(r.acts, "reject")
		case *expr.Queue:
			words = append(words, fmt.Sprintf("queue num %d", x.Num))
			r.acts = append(r.acts, "queue")
		case *expr.Masq, *expr.NAT, *expr.Redir:
			// Address translation needs conntrack, and rewrites.
			r.tracks = true
			w := natWord(x)
			words = append(words, w)
			r.acts = append(r.acts, w)
		case *expr.Connlimit:
			r.tracks = true
			words = append(words, "ct count")
			r.other = true
		case *expr.Match:
			// iptables-nft rules carry xtables matches: conntrack and
			// state track, anything else narrows the rule.
			words = append(words, "xt match "+x.Name)
			switch x.Name {
			case "conntrack", "state", "connmark", "connlimit", "connbytes", "helper":
				r.tracks = true
			}
			r.other = true
		case *expr.Target:
			words = append(words, "xt target "+x.Name)
			switch x.Name {
			case "CT", "CONNMARK", "SNAT", "DNAT", "MASQUERADE", "REDIRECT", "NETMAP":
				r.tracks = true
			}
			switch x.Name {
			case "REJECT", "NFQUEUE", "SNAT", "DNAT", "MASQUERADE", "REDIRECT", "NETMAP", "TPROXY", "TCPMSS", "TOS", "TTL", "HL", "DSCP":
				r.acts = append(r.acts, x.Name)
			}
		default:
			words = append(words, strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", e), "*expr.")))
		}
	}
	r.text = strings.Join(words, " ")
	return r
}

// natWord is nft's word for a translation statement.
func natWord(e expr.Any) string {
	switch x := e.(type) {
	case *expr.Masq:
		return "masquerade"
	case *expr.Redir:
		return "redirect"
	case *expr.NAT:
		if x.Type == expr.NATTypeDestNAT {
			return "dnat"
		}
	}
	return "snat"
}

// compare renders a cmp and records what it matches.
func (r *rule) compare(o operand, x *expr.Cmp) string {
	op := cmpOp(x.Op)
	switch o.kind {
	case kindAddr:
		a, ok := addrOf(x.Data)
		if !ok || (x.Op != expr.CmpOpEq && x.Op != expr.CmpOpNeq) {
			r.other = true
			return fmt.Sprintf("%s %s%x", o.name, op, x.Data)
		}
		bits := a.BitLen()
		if o.mask != nil {
			bits = maskBits(o.mask)
		}
		p := netip.PrefixFrom(a, bits).Masked()
		r.addrs = append(r.addrs, addrMatch{v6: o.v6, field: field(o), neg: x.Op == expr.CmpOpNeq, ranges: []addrRange{prefixRange(p)}})
		if bits == a.BitLen() {
			return fmt.Sprintf("%s %s%s", o.name, op, a)
		}
		return fmt.Sprintf("%s %s%s", o.name, op, p)
	case kindCtState:
		// ct state a,b compiles to a mask of the states, compared != 0.
		r.other = true
		if o.mask != nil && x.Op == expr.CmpOpNeq && isZero(x.Data) {
			return o.name + " " + ctStates(o.mask)
		}
		return fmt.Sprintf("%s %s%s", o.name, op, ctStates(x.Data))
	case kindNFProto:
		if len(x.Data) == 1 && x.Op == expr.CmpOpEq {
			switch x.Data[0] {
			case unix.NFPROTO_IPV4:
				r.v4 = true
				return "meta nfproto ipv4"
			case unix.NFPROTO_IPV6:
				r.v6 = true
				return "meta nfproto ipv6"
			}
		}
	}
	r.other = true
	return fmt.Sprintf("%s %s%s", o.name, op, value(o, x.Data))
}

// lookup renders a set lookup and records the addresses it matches.
func (r *rule) lookup(o operand, x *expr.Lookup, sets setReader) string {
	op := ""
	if x.Invert {
		op = "!= "
	}
	name := "@" + x.SetName
	var elems []nftables.SetElement
	var set *nftables.Set
	var err error
	if sets != nil {
		set, elems, err = sets(x.SetName)
	}
	if err == nil && set != nil && set.Anonymous {
		var vs []string
		for _, el := range elems {
			if !el.IntervalEnd {
				vs = append(vs, value(o, el.Key))
			}
		}
		name = "{ " + strings.Join(vs, ", ") + " }"
	}
	if o.kind != kindAddr {
		r.other = true
		return fmt.Sprintf("%s %s%s", o.name, op, name)
	}
	m := addrMatch{v6: o.v6, field: field(o), neg: x.Invert}
	if err != nil || set == nil || set.Concatenation {
		m.unknown = true
	} else {
		m.ranges = setRanges(set, elems)
	}
	r.addrs = append(r.addrs, m)
	return fmt.Sprintf("%s %s%s", o.name, op, name)
}

// setRanges turns a set's elements into address ranges: an interval set
// holds starts and (exclusive) ends, any other set single addresses.
func setRanges(set *nftables.Set, elems []nftables.SetElement) []addrRange {
	var out []addrRange
	if !set.Interval {
		for _, el := range elems {
			if a, ok := addrOf(el.Key); ok {
				out = append(out, addrRange{a, a})
			}
		}
		return out
	}
	els := slices.Clone(elems)
	slices.SortStableFunc(els, func(a, b nftables.SetElement) int {
		x, _ := addrOf(a.Key)
		y, _ := addrOf(b.Key)
		return x.Compare(y)
	})
	for i, el := range els {
		if el.IntervalEnd {
			continue
		}
		from, ok := addrOf(el.Key)
		if !ok {
			continue
		}
		to := lastAddr(from)
		if len(el.KeyEnd) > 0 {
			if e, ok := addrOf(el.KeyEnd); ok {
				to = e
			}
		} else if i+1 < len(els) && els[i+1].IntervalEnd {
			if e, ok := addrOf(els[i+1].Key); ok && e.IsValid() {
				to = e.Prev()
			}
		}
		out = append(out, addrRange{from, to})
	}
	return out
}

// lastAddr is the highest address of a's family.
func lastAddr(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.AddrFrom4([4]byte{255, 255, 255, 255})
	}
	var b [16]byte
	for i := range b {
		b[i] = 0xff
	}
	return netip.AddrFrom16(b)
}

func prefixRange(p netip.Prefix) addrRange {
	from := p.Addr()
	b := from.AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	to, _ := netip.AddrFromSlice(b)
	return addrRange{from, to}
}

func field(o operand) string {
	if strings.HasSuffix(o.name, "saddr") {
		return "saddr"
	}
	return "daddr"
}

// payloadName names the header field a payload expression loads.
func payloadName(fam nftables.TableFamily, p *expr.Payload) operand {
	switch p.Base {
	case expr.PayloadBaseNetworkHeader:
		v6 := fam == nftables.TableFamilyIPv6
		switch {
		case p.Offset == 12 && p.Len == 4 && !v6:
			return operand{name: "ip saddr", kind: kindAddr}
		case p.Offset == 16 && p.Len == 4 && !v6:
			return operand{name: "ip daddr", kind: kindAddr}
		case p.Offset == 8 && p.Len == 16:
			return operand{name: "ip6 saddr", kind: kindAddr, v6: true}
		case p.Offset == 24 && p.Len == 16:
			return operand{name: "ip6 daddr", kind: kindAddr, v6: true}
		case p.Offset == 9 && p.Len == 1:
			return operand{name: "ip protocol", kind: kindL4Proto}
		}
		return operand{name: fmt.Sprintf("@nh,%d,%d", p.Offset*8, p.Len*8)}
	case expr.PayloadBaseTransportHeader:
		switch {
		case p.Offset == 0 && p.Len == 2:
			return operand{name: "th sport", kind: kindPort}
		case p.Offset == 2 && p.Len == 2:
			return operand{name: "th dport", kind: kindPort}
		}
		return operand{name: fmt.Sprintf("@th,%d,%d", p.Offset*8, p.Len*8)}
	}
	return operand{name: fmt.Sprintf("@ll,%d,%d", p.Offset*8, p.Len*8)}
}

// metaKeys and ctKeys are nft's names of the meta and ct keys, indexed
// by their NFT_META_* and NFT_CT_* numbers.
var (
	metaKeys = strings.Fields("length protocol priority mark iif oif iifname oifname iiftype oiftype skuid skgid nftrace rtclassid secmark nfproto l4proto ibrname obrname pkttype cpu iifgroup oifgroup cgroup random")
	ctKeys   = strings.Fields("state direction status mark secmark expiration helper l3proto saddr daddr protocol proto-src proto-dst label packets bytes avgpkt zone event")
)

func metaName(k expr.MetaKey) string { return keyName(metaKeys, uint32(k)) }
func ctName(k expr.CtKey) string     { return keyName(ctKeys, uint32(k)) }

func keyName(names []string, k uint32) string {
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("key %d", k)
}

// ctStates names the bits of a ct state value (host byte order).
func ctStates(b []byte) string {
	if len(b) != 4 {
		return fmt.Sprintf("%x", b)
	}
	v := binary.NativeEndian.Uint32(b)
	var out []string
	for _, s := range []struct {
		bit  uint32
		name string
	}{
		{expr.CtStateBitINVALID, "invalid"},
		{expr.CtStateBitESTABLISHED, "established"},
		{expr.CtStateBitRELATED, "related"},
		{expr.CtStateBitNEW, "new"},
		{expr.CtStateBitUNTRACKED, "untracked"},
	} {
		if v&s.bit != 0 {
			out = append(out, s.name)
		}
	}
	if len(out) == 0 {
		return "0"
	}
	return strings.Join(out, ",")
}

// value renders data as the operand's type.
func value(o operand, b []byte) string {
	switch o.kind {
	case kindAddr:
		if a, ok := addrOf(b); ok {
			return a.String()
		}
	case kindCtState:
		return ctStates(b)
	case kindL4Proto:
		if len(b) == 1 {
			switch b[0] {
			case unix.IPPROTO_TCP:
				return "tcp"
			case unix.IPPROTO_UDP:
				return "udp"
			case unix.IPPROTO_ICMP:
				return "icmp"
			case unix.IPPROTO_ICMPV6:
				return "ipv6-icmp"
			}
			return fmt.Sprint(b[0])
		}
	case kindPort:
		if len(b) == 2 {
			return fmt.Sprint(binary.BigEndian.Uint16(b))
		}
	case kindIfname:
		return `"` + strings.TrimRight(string(b), "\x00") + `"`
	}
	return fmt.Sprintf("0x%x", b)
}

func addrOf(b []byte) (netip.Addr, bool) {
	if len(b) != 4 && len(b) != 16 {
		return netip.Addr{}, false
	}
	return netip.AddrFromSlice(b)
}

func maskBits(m []byte) int {
	n := 0
	for _, b := range m {
		for i := 7; i >= 0; i-- {
			if b&(1<<i) == 0 {
				return n
			}
			n++
		}
	}
	return n
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func cmpOp(op expr.CmpOp) string {
	switch op {
	case expr.CmpOpNeq:
		return "!= "
	case expr.CmpOpLt:
		return "< "
	case expr.CmpOpLte:
		return "<= "
	case expr.CmpOpGt:
		return "> "
	case expr.CmpOpGte:
		return ">= "
	}
	return ""
}

func verdictText(v *expr.Verdict) string {
	switch v.Kind {
	case expr.VerdictAccept:
		return "accept"
	case expr.VerdictDrop:
		return "drop"
	case expr.VerdictQueue:
		return "queue"
	case expr.VerdictContinue:
		return "continue"
	case expr.VerdictReturn:
		return "return"
	case expr.VerdictJump:
		return "jump " + v.Chain
	case expr.VerdictGoto:
		return "goto " + v.Chain
	case expr.VerdictBreak:
		return "break"
	case expr.VerdictStop:
		return "stop"
	}
	return fmt.Sprintf("verdict %d", v.Kind)
}
