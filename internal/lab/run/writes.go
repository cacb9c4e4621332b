package run

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/types/descriptorpb"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// writeMethods are the API's data methods that may change state, by full
// method name ("/locklab.v1.CounterService/Increment"): every method of
// the data services that the proto does not mark NO_SIDE_EFFECTS: the
// calls the server's -work runs in. Each round records how many an arm
// served (duet.Measure.Writes): the mix its figures are of.
var writeMethods = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	svcs := locklabv1.File_locklab_v1_locklab_proto.Services()
	for i := range svcs.Len() {
		s := svcs.Get(i)
		if s.Name() == "AdminService" {
			continue
		}
		ms := s.Methods()
		for j := range ms.Len() {
			m := ms.Get(j)
			opts, _ := m.Options().(*descriptorpb.MethodOptions)
			if opts.GetIdempotencyLevel() != descriptorpb.MethodOptions_NO_SIDE_EFFECTS {
				out["/"+string(s.FullName())+"/"+string(m.Name())] = true
			}
		}
	}
	return out
})

// callsOf counts a stats reply's calls of the data services: the
// workload's, without the lab's own admin calls.
func callsOf(st *locklabv1.GetStatsResponse) uint64 {
	var n uint64
	for method, c := range st.GetRpcCounts() {
		if !strings.HasPrefix(method, "/"+string(locklabv1.File_locklab_v1_locklab_proto.Package())+".AdminService/") {
			n += c.GetTotal()
		}
	}
	return n
}

// writesOf counts the calls of a stats reply's methods that may change
// state.
func writesOf(st *locklabv1.GetStatsResponse) uint64 {
	var n uint64
	for method, c := range st.GetRpcCounts() {
		if writeMethods()[method] {
			n += c.GetTotal()
		}
	}
	return n
}
