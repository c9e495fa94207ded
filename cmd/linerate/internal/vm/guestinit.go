package vm

import (
	"fmt"
	"strings"
)

// Framing of the shell serial port (ttyS2). The host sends one line per
// request, "ping NONCE" (answered "@@NONCE:pong@@") until the shell
// answers, then "exec NONCE BASE64-COMMAND"; the guest runs the command
// with /bin/sh, stdin /dev/null, and answers
// "@@NONCE:out@@BASE64-OUTPUT@@NONCE:rc=STATUS@@": the nonce tells a
// reply from anything left on the line by an earlier client, base64 keeps
// the output exact.
const shellLoop = `shell_loop() {
	mkdir -p ` + guestStateDir + `/shell
	exec 3<>/dev/ttyS2
	stty raw -echo <&3
	while read -r verb nonce arg <&3; do
		case $verb in
		ping) printf '@@%s:pong@@\n' "$nonce" >&3 ;;
		exec)
			printf '%s' "$arg" | base64 -d >` + guestStateDir + `/shell/cmd
			(cd /tmp && /bin/sh ` + guestStateDir + `/shell/cmd) </dev/null >` + guestStateDir + `/shell/out 2>&1
			rc=$?
			{ printf '@@%s:out@@' "$nonce"; base64 <` + guestStateDir + `/shell/out | tr -d '\n'; printf '@@%s:rc=%d@@\n' "$nonce" "$rc"; } >&3 ;;
		esac
	done
}
`

// renderMachineInit writes /init of a Machine: mount the pseudo
// filesystems (bpffs and a /run tmpfs too), lo up, load the modules,
// name and address the NICs, start the shell on ttyS2, run the Script in
// its own process group with its output on ttyS1, power off when it
// ends. A setup failure prints setupFailed and what failed on the
// console, then powers off.
func renderMachineInit(m *Machine, mods []Module) string {
	q := ShellQuote
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/sbin:/usr/sbin:/bin:/usr/bin HOME=/root TMPDIR=/tmp
fail() { echo ` + q(setupFailed) + `"$*"; poweroff -f; sleep 60; }
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
mount -t tmpfs -o mode=1777 tmpfs /tmp || fail "mount /tmp"
mount -t tmpfs -o mode=755 tmpfs /run || fail "mount /run"
mount -t bpf bpf /sys/fs/bpf || fail "mount bpffs on /sys/fs/bpf"
mkdir -p ` + guestStateDir + ` || fail "mkdir ` + guestStateDir + `"
ip link set lo up || fail "ip link set lo up"
hostname ` + q(m.Name) + `
`)
	for _, mod := range mods {
		fmt.Fprintf(&b, "insmod %s || fail %s\n", ModuleGuestPath(mod), q("insmod "+mod.Name))
	}
	// IPv6 is on but quiet on every NIC (set as the default before any
	// NIC comes up): no link-local address, no duplicate address
	// detection, no router solicitation, nothing taken from router
	// advertisements. So nothing of the guest's own IPv6 stack reaches the
	// data path whose every frame the switch counts, but the report of
	// the data address's solicited-node group when the NIC comes up,
	// before the agent starts.
	b.WriteString(`if [ -d /proc/sys/net/ipv6 ]; then
	for c in default all; do
		for kv in addr_gen_mode=1 accept_dad=0 dad_transmits=0 router_solicitations=0 accept_ra=0 autoconf=0; do
			echo "${kv#*=}" >/proc/sys/net/ipv6/conf/$c/${kv%%=*} || fail "quiet IPv6: $c/${kv%%=*}"
		done
	done
fi
`)
	b.WriteString(`nic() {
	dev=
	for a in /sys/class/net/*/address; do
		[ "$(cat "$a")" = "$1" ] && { dev=${a%/address}; dev=${dev##*/}; }
	done
	[ -n "$dev" ] || fail "no NIC with MAC $1 (for $2) in /sys/class/net"
	[ "$dev" = "$2" ] || ip link set dev "$dev" name "$2" || fail "rename NIC $dev ($1) to $2"
	ip addr add "$3" dev "$2" || fail "ip addr add $3 dev $2"
	[ -z "$4" ] || ip -6 addr add "$4" dev "$2" || fail "ip -6 addr add $4 dev $2"
	ip link set dev "$2" up || fail "ip link set $2 up"
}
`)
	addr6 := ""
	if m.Data.Addr6.IsValid() {
		addr6 = m.Data.Addr6.String()
	}
	fmt.Fprintf(&b, "nic %s %s %s %s\n", q(m.Data.MAC.String()), q(m.Data.Name), q(m.Data.Addr.String()), q(addr6))
	// A single-vCPU-fed receive path under TCG drains slowly: a deeper
	// backlog keeps bursts from the tap from being dropped before the
	// stack counts them.
	b.WriteString("echo 10000 >/proc/sys/net/core/netdev_max_backlog || fail \"raise netdev_max_backlog\"\n")
	fmt.Fprintf(&b, "nic %s %s %s\n", q(m.Mgmt.MAC.String()), q(m.Mgmt.Name), q(m.Mgmt.Addr.String()))
	b.WriteString(shellLoop)
	b.WriteString(`shell_loop &
stty -F /dev/ttyS1 raw -echo || fail "stty ttyS1"
cd /tmp
setsid /bin/sh ` + guestMachineScript + ` </dev/null >/dev/ttyS1 2>&1 &
pid=$!
echo "$pid" >` + guestScriptPid + ` || fail "write ` + guestScriptPid + `"
echo ` + q(readyLine) + `" (script pid $pid)"
wait "$pid"
echo "linerate-vm: script exited $?: powering off"
poweroff -f
sleep 60
`)
	return b.String()
}
