// Package latency keeps how long test frames took: a histogram of
// delays in microseconds (the resolution of the send time pktgen's header
// carries) with a fixed layout that the receiver's XDP program fills in
// the kernel and Go fills from AF_PACKET rings, RFC 3550 interarrival
// jitter, and the figures a report gives (Summary: min, p50, p90, p99,
// p99.9, max, mean, jitter, RFC 5481 PDV), stated with the clock they
// were measured on (Clock).
//
// The layout (Bucket): 0 to 63 µs exact, then 32 buckets per power of
// two up to 2^24 µs, 640 buckets of 8 bytes: 5 KiB per stream and per
// CPU (or ring) that counts it. A bucket is at most 1/32 of its lowest
// value wide, and a percentile reports its middle, so it is within
// 1.6 % of a true sample (and of the header's microsecond). Min, max and
// mean are exact. A delay below 0 (the frame arrived before it was sent:
// the clocks disagree) and one of 16.8 s or more are counted apart, so
// that the samples always equal the frames recorded.
package latency
