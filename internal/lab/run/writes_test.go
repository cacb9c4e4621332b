package run

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
)

// TestWriteMethods: every data service has methods that write and methods
// the proto marks as only reading, and no admin method counts; a reply's
// counts of the reading methods add nothing (the control: the writing
// ones do).
func TestWriteMethods(t *testing.T) {
	svcs := locklabv1.File_locklab_v1_locklab_proto.Services()
	for i := range svcs.Len() {
		s := svcs.Get(i)
		var writes, reads int
		for j := range s.Methods().Len() {
			if writeMethods()["/"+string(s.FullName())+"/"+string(s.Methods().Get(j).Name())] {
				writes++
			} else {
				reads++
			}
		}
		if s.Name() == "AdminService" {
			assert.Zero(t, writes, "admin methods are not the workload's")
			continue
		}
		assert.Positive(t, writes, "%s writes", s.Name())
		assert.Positive(t, reads, "%s reads", s.Name())
	}
	counts := map[string]*locklabv1.RpcCount{}
	var want uint64
	for m := range writeMethods() {
		counts[m] = &locklabv1.RpcCount{Total: 3}
		want += 3
		read := strings.Replace(m, "/Increment", "/GetValue", 1)
		if read != m {
			counts[read] = &locklabv1.RpcCount{Total: 100}
		}
	}
	counts["/locklab.v1.AdminService/GetStats"] = &locklabv1.RpcCount{Total: 7}
	st := &locklabv1.GetStatsResponse{RpcCounts: counts}
	assert.Equal(t, want, writesOf(st))
	assert.Equal(t, want+100, callsOf(st), "every data call, no admin call")
}
