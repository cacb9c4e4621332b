// Package hosts gives the lab hosts of their own on one machine: each host is
// a Linux network namespace with one address, joined to the root namespace by
// a veth pair on a private /30. A replica started inside a host (Host.Command)
// is reached from the root namespace at Host.Addr, over a real link, so that a
// load balancer in front of several replicas balances among addresses, not
// among ports of one loopback.
//
// Every namespace and link is named with Prefix and the runner's PID. Close
// removes what Start made, and Start removes what it made when it fails;
// Sweep removes what a runner that died without closing (kill -9) left
// behind, after checking that its PID is gone. Making hosts needs root and
// the ip command of iproute2; without them Start returns ErrUnsupported.
package hosts
