// Package balancer runs a real load balancer — HAProxy or nginx, as Debian
// packages them — in front of locklab replicas, privately: its config, pid
// file, sockets, logs and temporary files all live in a directory of its own
// that Close removes, and nothing of the system's own service is touched.
//
// The balancer speaks HTTP/2 end to end: gRPC clients call it over h2c and
// it calls the replicas over h2c. A call is balanced by Policy: round robin,
// or by the value of the KeyHeader request header, hashed consistently so
// that one key goes to one replica while the set of replicas holds still.
// Kinds is the one list of balancers; each row says how to write its config
// for every Policy and how to start it. HAProxy also has a runtime API
// (a unix socket in the private directory), through which a replica is
// drained and its health read; nginx, as packaged, has neither that API nor
// active health checks.
package balancer
