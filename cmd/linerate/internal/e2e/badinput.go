package e2e

// BadCommand is a command line the binary refuses before it touches
// anything, with exit 2 and what its stderr names.
type BadCommand struct {
	Args []string
	Want string
}

// BadCommands are the coordinator's and the lab's command lines that
// cmd/linerate's TestCommandsBadInput checks in-process, without root;
// the reliability suite runs them too, against the real binary as root,
// comparing the host before and after (TestReliabilityBadInput).
var BadCommands = []BadCommand{
	{[]string{"lab", "run", "--name", "x/../../..", "--count", "10"}, `lab name "x/../../..": 1-20 letters, digits`},
	{[]string{"lab", "down", "--name", "x/../../etc"}, `--name: lab name "x/../../etc"`},
	{[]string{"lab", "down"}, "give --name NAME or --all"},
	{[]string{"doctor", "--iface", "lo", "--known-check", "mtus=jumbo"}, `--known-check "mtus": no such check: valid checks are irqbalance,`},
	{[]string{"lab", "run", "--loss-every", "1"}, "--loss-every 1: would drop every packet"},
	{[]string{"lab", "run", "--loss", "101"}, "--loss 101: want a percentage"},
	{[]string{"lab", "run", "--shape", "5bit"}, `--shape "5bit": 5 bit/s: want 8kbit to 400gbit`},
	{[]string{"lab", "run", "--shape", "fast"}, `--shape "fast"`},
	{[]string{"lab", "run", "--name", "abcdefghijkl"}, "at most 11 characters with a management network"},
	{[]string{"lab", "run", "--senders", "0"}, "0 senders and 2 receivers: want at least one of each"},
	{[]string{"lab", "run", "--queues", "65"}, "--queues 65: want 1-64"},
	{[]string{"lab", "run", "--hosts", "xen"}, `--hosts "xen": want netns (network namespaces) or vm (qemu guests)`},
	{[]string{"lab", "run", "--vcpus", "8"}, "--vcpus 8: only VM hosts have vCPUs (--hosts vm)"},
	{[]string{"lab", "run", "--hosts", "vm", "--vcpus", "3"}, "--vcpus 3"},
	{[]string{"lab", "run", "--hosts", "vm", "--vcpus", "4", "--queues", "8"}, "--queues 8"},
	{[]string{"lab", "up", "--hosts", "vm", "--senders", "10", "--receivers", "7"}, "17 VM hosts: at most 16"},
	// Guest files: VM hosts only, executables whose libraries are found;
	// lab exec: a lab's name, a host and a command.
	{[]string{"lab", "up", "--guest-file", "/bin/sh"}, "--guest-file /bin/sh: needs --hosts vm (the hosts of --hosts netns share this machine's files)"},
	{[]string{"lab", "up", "--hosts", "vm", "--guest-file", "linerate-no-such-tool"}, `--guest-file: guest file "linerate-no-such-tool": no such command in PATH`},
	{[]string{"lab", "up", "--hosts", "vm", "--guest-file", "/nonexistent/trafgen"}, "--guest-file: guest file /nonexistent/trafgen: stat /nonexistent/trafgen: no such file or directory"},
	{[]string{"lab", "up", "--hosts", "vm", "--guest-file", "/etc/passwd"}, "--guest-file: guest file /etc/passwd: not an x86-64 ELF executable: not an executable regular file"},
	{[]string{"lab", "exec", "--name", "x/..", "s1", "true"}, `--name: lab name "x/.."`},
	{[]string{"lab", "exec", "--name", "lab", "s1"}, "give HOST and COMMAND: lab exec --name NAME HOST COMMAND [ARG...]"},
	{[]string{"lab", "campaign", "--sizes", "40"}, "frame_sizes[0]: 40: want 64-9018 bytes"},
	// IPv6 and 802.1Q: a VLAN id 802.1Q has, frames that hold the
	// family's headers (the tag counted).
	{[]string{"lab", "run", "--vlan", "4096"}, "--vlan 4096: want an 802.1Q VLAN id 1-4094 (0: untagged; 4095 is reserved)"},
	{[]string{"lab", "up", "--vlan", "-1"}, "--vlan -1: want an 802.1Q VLAN id 1-4094"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--vlan", "4096"}, "vlan 4096: want an 802.1Q VLAN id 1-4094"},
	{[]string{"lab", "run", "--ipv6", "--frame-size", "64"}, "frame size 64: want 82 to 9018 bytes for IPv6 (Ethernet frame including FCS, the tag counted: 14 B Ethernet + 40 B IPv6 + 8 B UDP + 16 B pktgen header + 4 B FCS)"},
	{[]string{"lab", "run", "--ipv6", "--vlan", "100", "--frame-size", "82"}, "frame size 82: want 86 to 9018 bytes for IPv6 with an 802.1Q tag"},
	{[]string{"lab", "campaign", "--ipv6", "--sizes", "64,1518"}, "frame_sizes[0]: 64: want 82-9018 bytes for IPv6"},
	{[]string{"send", "--iface", "lo", "--dst", "fe80::1", "--count", "1"}, "--dst fe80::1 is IPv6 link-local (fe80::/10): valid on one link only"},
	{[]string{"send", "--iface", "lo", "--dst", "2001:2::2", "--src", "fe80::1", "--count", "1"}, "--src fe80::1 is IPv6 link-local (fe80::/10)"},
	// The lab's delay: netem exists only in the VM hosts' kernel, and the
	// delay has bounds.
	{[]string{"lab", "run", "--delay", "20ms"}, "--delay 20ms: needs --hosts vm: the hosts of --hosts netns share this machine's kernel, which has no netem qdisc"},
	{[]string{"lab", "campaign", "--hosts", "netns", "--delay", "20ms"}, "--delay 20ms: needs --hosts vm"},
	{[]string{"lab", "up", "--delay", "1ms"}, "--delay 1ms: needs --hosts vm"},
	{[]string{"lab", "run", "--hosts", "vm", "--delay", "-5ms"}, `--delay "-5ms": delay -5ms: want a delay and jitter of 0 or more`},
	{[]string{"lab", "run", "--hosts", "vm", "--delay", "11s"}, `--delay "11s": delay 11s: want at most 10s`},
	{[]string{"lab", "campaign", "--hosts", "vm", "--delay", "20ms,-1ms"}, "want a delay and jitter of 0 or more"},
	{[]string{"lab", "run", "--hosts", "vm", "--delay", "1ms,5ms"}, "the jitter 5ms is larger than the delay 1ms"},
	{[]string{"lab", "run", "--hosts", "vm", "--delay", "later"}, `--delay "later": want D or D,JITTER`},
	{[]string{"lab", "run", "--hosts", "vm", "--delay", "20ms", "--xmit-mode", "start_xmit"}, "--xmit-mode: xmit mode start_xmit with the lab's delay 20ms: its frames would pass the senders' netem by"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--xmit-mode", "netif_receive"}, `xmit mode "netif_receive": want start_xmit or queue_xmit`},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--xmit-mode", "queue_xmit", "--backend", "xdp"}, "xmit mode queue_xmit: kernel pktgen only"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "3000", "--burst", "3"}, "burst 3 × clone_skb 1: 3 copies of each frame: want a power of two up to 8192 (pktgen numbers every frame it sends"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--clone-skb", "2", "--backend", "afpacket"}, "clone_skb: kernel pktgen only (backend kernel or auto); backend afpacket"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--node-alloc", "--backend", "xdp"}, "node_alloc: kernel pktgen only"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--udp-src", "5-x"}, `--udp-src "5-x": want a port or a range A-B within 0-65534`},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--udp-src", "0-99"}, "udp source ports 0-99: want 1 <= min <= max <= 65534"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--queue-map", "4-2"}, `--queue-map "4-2": want a queue or a range A-B within 0-65535`},
	{[]string{"lab", "run", "--count", "1001", "--burst", "4"}, "count 1001 with burst 4: pktgen sends whole bursts: want a multiple of 4 (e.g. 1004)"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--need-wakeup", "sometimes"}, `need wakeup "sometimes": valid values are auto, on and off`},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--need-wakeup", "on", "--backend", "xdp"}, "need wakeup on: an AF_XDP socket's bind flag (the afxdp backend's, the afxdp receiver method's); backend xdp with method auto has none"},
	{[]string{"run", "--senders", "a", "--receivers", "b"}, "neither a duration nor a count"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--threads", "2"}, "count 1: fewer packets than the 2 threads per flow: want at least 2"},
	{[]string{"members"}, "--join: give the gossip address"},
	{[]string{"run", "--html", "/nonexistent/r.html", "--count", "1"}, "--html /nonexistent/r.html: directory /nonexistent does not exist"},
	{[]string{"lab", "run", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	{[]string{"lab", "campaign", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	{[]string{"campaign", "run", "spec.yaml", "--html", "/nonexistent/r.html"}, "directory /nonexistent does not exist"},
	// Directions: --bidir already sends both ways.
	{[]string{"lab", "run", "--bidir", "--reverse"}, "bidir and reverse: give one"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--bidir", "--reverse"}, "bidir and reverse: give one"},
	// Latency: the receiver's mode and stated clock.
	{[]string{"recv", "--iface", "lo", "--latency", "rtt2"}, `--latency "rtt2": valid latency modes are oneway and off`},
	{[]string{"recv", "--iface", "lo", "--clock", "gps"}, `--clock "gps": want same-host, synchronised, estimated or unsynchronised`},
	// Latency: the run's mode, and round trips only where receivers can
	// reflect (XDP_TX: not AF_PACKET) at a bounded rate.
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--latency", "bogus"}, `latency "bogus": valid latency modes are oneway, rtt and off`},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--latency", "rtt", "--method", "afpacket"},
		"latency rtt with receiver method afpacket: receivers reflect the latency stream with XDP_TX, which the afpacket method cannot: give method xdp or auto, or latency oneway"},
	{[]string{"lab", "run", "--latency", "rtt", "--method", "afpacket"}, "latency rtt with receiver method afpacket"},
	{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "1", "--latency", "rtt", "--rtt-rate", "20000"}, "rtt rate 20000 pps: want 1 to 10000"},
	{[]string{"lab", "run", "--latency", "rtt", "--rtt-rate", "0"}, "--rtt-rate 0: want 1 to 10000 packets per second"},
	// The agent's rails: an --allow-dst covering everything only with
	// --allow-dst-any, VLANs and source MACs well formed.
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-dst", "0.0.0.0/0"},
		"--allow-dst 0.0.0.0/0: a prefix shorter than /8 covers so much that a sender could flood any host"},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-dst", "198.18.0.0/15,::/0"}, "add --allow-dst-any to allow it anyway"},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-vlan", "4096"}, `--allow-vlan: "4096": want a VLAN id 0-4095 or a range`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-vlan", "200-100"}, `--allow-vlan: "200-100"`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-vlan", "ten"}, `--allow-vlan: "ten"`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-src-mac", "02:00:00:00:00"}, `--allow-src-mac: "02:00:00:00:00": want a MAC`},
	{[]string{"agent", "--role", "sender", "--iface", "lo", "--insecure", "--bind", "", "--allow-src-mac", "ff:ff:ff:ff:ff:ff"}, "--allow-src-mac ff:ff:ff:ff:ff:ff: a group MAC"},
	{[]string{"agent", "--role", "receiver", "--iface", "lo", "--insecure", "--max-run", "0s"}, "--max-run 0s: want a positive duration such as 24h"},
	{[]string{"agent", "--role", "receiver", "--iface", "lo", "--insecure", "--max-run", "-1h"}, "--max-run -1h0m0s: want a positive duration"},
	// The coordinator's join: how long it may keep trying.
	{[]string{"members", "--join", "198.18.0.1:7946", "--insecure", "--insecure-gossip", "--join-timeout", "0s"}, "--join-timeout 0s: want a positive duration, such as 30s"},
	{[]string{"run", "--join", "198.18.0.1:7946", "--insecure", "--insecure-gossip", "--senders", "a", "--receivers", "b", "--count", "1", "--join-timeout", "-1s"}, "--join-timeout -1s: want a positive duration"},
	// doctor: the run its checks are for, named by flags that must be valid.
	{[]string{"doctor", "--iface", "lo", "--role", "switch"}, `--role "switch": valid roles are sender, receiver and both`},
	{[]string{"doctor", "--iface", "lo", "--frame-size", "40"}, "--frame-size 40: want 64 to 65535 bytes, or 0 (not checked)"},
	{[]string{"doctor", "--iface", "lo", "--cpus", "x"}, `--cpus "x": want a CPU list`},
	{[]string{"doctor", "--iface", "lo", "--addrs", "198.18.0.1,nine"}, `--addrs "198.18.0.1,nine": "nine" is not an IP address`},
	{[]string{"doctor", "--iface", "lo", "--irqbalance", "stop"}, `--irqbalance "stop": valid values are refuse and ignore`},
	{[]string{"doctor", "--iface", "lo", "--backend", "dpdk"}, `--backend "dpdk": valid backends are auto, kernel, xdp, afxdp, afpacket and userspace`},
	{[]string{"doctor", "--iface", "lo", "--method", "kernel"}, `--method "kernel": valid receiver methods are auto, xdp, afpacket and afxdp`},
	{[]string{"doctor", "--iface", "lo", "--root", "/tmp", "--fix"}, `--root "/tmp": --fix writes the live host, so it needs --root / (the default)`},
	{[]string{"doctor", "--iface", "lo", "--root", "snap.tar.gz", "--fix-rps"}, `--root "snap.tar.gz": --fix writes the live host`},
	{[]string{"doctor"}, "--iface: required (the data interface to check), or --restore"},
	{[]string{"doctor", "--iface", "nosuchif0"}, "--iface: doctor nosuchif0: no such interface"},
	// A configuration file named must be there (only the default file
	// may be absent).
	{[]string{"agent", "--config", "/nonexistent/agent.yaml", "--role", "sender", "--iface", "lo", "--insecure"}, "--config: open /nonexistent/agent.yaml: no such file or directory"},
	{[]string{"members", "--config", "/nonexistent/coordinator.yaml"}, "--config: open /nonexistent/coordinator.yaml: no such file or directory"},
}
