package receiver

import "fmt"

// A Table is the accounting core: feed it frames, read the streams.
func ExampleNewTable() {
	tab, err := NewTable(Options{})
	if err != nil {
		panic(err)
	}
	for _, seq := range []uint32{1, 2, 4, 4, 3, 7} {
		tab.Add(testFrame{seq: seq}.bytes()) // Ethernet, IPv4, UDP, pktgen header
	}
	tab.Add(testFrame{arp: true}.bytes())
	streams, other, _ := tab.Streams(0)
	for _, s := range streams {
		fmt.Printf("%s -> %s:%d received %d max_seq %d duplicates %d reordered %d missing %d %v\n",
			s.Src, s.Dst, s.DstPort, s.Received, s.MaxSeq, s.Duplicates, s.Reordered, s.Missing, s.MissingRanges)
	}
	fmt.Println("other", other)
	// Output:
	// 198.18.0.1 -> 198.18.0.2:9 received 6 max_seq 7 duplicates 1 reordered 1 missing 2 [[5 6]]
	// other 1
}
