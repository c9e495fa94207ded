// Package scaletest holds the control-plane scale test (TestScale, built
// with the traffic tag; `make bench-scale` runs it at full size): a fleet
// of real agents on loopback in several processes of the test binary
// (child_test.go: one host each), discovered, health-checked and started
// by the coordinator's own code. It lives outside coordinator so that the coordinator, tests
// included, never imports the agent; the package has no code of its own.
package scaletest
