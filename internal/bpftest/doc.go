// Package bpftest is the one rule for a test that needs a kernel BPF
// feature: it skips only when the kernel says the feature is missing
// (ebpf.ErrNotSupported, from cilium/ebpf's feature probes or the probes
// here) and fails on every other error, a verifier rejection with the
// verifier's whole log. It is cilium/ebpf's testutils.SkipIfNotSupported,
// made strict.
package bpftest
