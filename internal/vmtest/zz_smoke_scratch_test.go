package vmtest

import (
	"context"
	"testing"
)

func TestScratchBoot(t *testing.T) {
	k := SkipUnlessAvailable(t)
	g := &Guest{Kernel: k, Modules: []string{"virtio_pci", "virtio_net"}, CPUs: 4,
		QEMUArgs: []string{
			"-object", "memory-backend-ram,id=m0,size=512M", "-object", "memory-backend-ram,id=m1,size=512M",
			"-numa", "node,nodeid=0,cpus=0-1,memdev=m0", "-numa", "node,nodeid=1,cpus=2-3,memdev=m1",
			"-device", "pxb,id=pxb1,bus_nr=0x80,numa_node=1,bus=pci.0",
			"-netdev", "tap,id=n1,ifname=lrvt0,script=no,downscript=no,queues=4,vhost=off",
			"-device", "virtio-net-pci,netdev=n1,bus=pxb1,mq=on,vectors=10",
		},
		Script: `set -x; ls -la /sys/class/net/; d=$(readlink -f /sys/class/net/eth0/device); echo $d; ls $d/..; cat $d/../numa_node $d/../local_cpulist; ls $d/../msi_irqs; ls /sys/class/net/eth0/queues; cat /proc/interrupts; for i in $(ls $d/../msi_irqs); do echo $i $(cat /proc/irq/$i/smp_affinity_list) $(cat /proc/irq/$i/effective_affinity_list) $(cat /sys/kernel/irq/$i/actions); ls -la /proc/irq/$i; done; echo 1 > /proc/sys/net/ipv6/conf/eth0/disable_ipv6; ip link set eth0 up; sleep 1; cat /proc/interrupts; for i in $(ls $d/../msi_irqs); do echo $i $(cat /proc/irq/$i/smp_affinity_list) $(cat /proc/irq/$i/effective_affinity_list) $(cat /sys/kernel/irq/$i/actions); done; cat /sys/devices/system/node/node*/cpulist; cat /sys/devices/system/cpu/online; ip -d link show eth0; ip -s link`, Log: TestLogger(t)}
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("took %s exit %d\n%s\n", res.Duration, res.ExitCode, res.Console)
}
