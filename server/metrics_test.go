package server

import (
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// TestStats checks GetStats' measurements after some calls, and that Reset
// starts a new window.
func TestStats(t *testing.T) {
	const increments = 37
	for _, mode := range storeModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t, Config{Mode: mode, SampleEvery: 1})
			ctx := t.Context()
			for i := range increments {
				_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: int64(i % 3)})
				require.NoError(t, err)
			}
			_, err := ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: -1})
			require.Error(t, err)
			for range 5 {
				_, err := ts.bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 1})
				require.NoError(t, err)
			}
			_, err = ts.kv.Put(ctx, &pb.PutRequest{Key: "k"})
			require.NoError(t, err)

			s := ts.stats(t)
			assert.Equal(t, uint32(1), s.GetLatencySampleEvery())
			var total uint64
			for _, c := range s.GetRpcCounts() {
				var byCode uint64
				for _, n := range c.GetCodes() {
					byCode += n
				}
				assert.Equal(t, byCode, c.GetTotal())
				total += c.GetTotal()
			}
			assert.Equal(t, uint64(increments+1+5+1), s.GetRequests())
			assert.Equal(t, total, s.GetRequests(), "requests = sum of rpc_counts")
			assert.Greater(t, s.GetWindowSeconds(), 0.0)
			assert.GreaterOrEqual(t, s.GetCpuSeconds(), 0.0)
			assert.Greater(t, s.GetRssBytes(), uint64(0))
			assert.Greater(t, s.GetGoroutines(), int64(0))

			lat := latencies(s)
			inc := lat["counter/increment"]
			require.NotNil(t, inc, "store_latency has counter/increment: %v", s.GetStoreLatency())
			assert.Equal(t, uint64(increments+1), inc.GetCount(), "every Increment reached the store, the refused one too")
			assert.Greater(t, inc.GetP50Ns(), 0.0)
			assert.LessOrEqual(t, inc.GetP50Ns(), inc.GetP90Ns())
			assert.LessOrEqual(t, inc.GetP90Ns(), inc.GetP99Ns())
			assert.LessOrEqual(t, inc.GetP99Ns(), inc.GetP999Ns())
			assert.LessOrEqual(t, inc.GetP999Ns(), inc.GetMaxNs())
			assert.Equal(t, uint64(5), lat["bank/transfer"].GetCount())
			assert.Equal(t, uint64(1), lat["kv/put"].GetCount())
			assert.Len(t, lat, 3, "GetStats reads through the bare stores: not in store_latency")
			if m, _ := LookupMode(mode); m.design.Owner {
				assert.GreaterOrEqual(t, s.GetQueueHighWater(), int64(1))
			} else {
				assert.Zero(t, s.GetQueueHighWater(), "no queue")
			}

			ts.reset(t, pb.Scenario_SCENARIO_A, 0, 0)
			s2 := ts.stats(t)
			assert.Equal(t, uint64(1), s2.GetRequests(), "a new window, with the Reset in it")
			assert.Equal(t, map[string]uint64{"OK": 1}, s2.GetRpcCounts()["/locklab.v1.AdminService/Reset"].GetCodes())
			assert.Empty(t, s2.GetStoreLatency(), "latency starts over")
			assert.Greater(t, s2.GetWindowSeconds(), 0.0)

			_, err = ts.counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)
			s3 := ts.stats(t)
			assert.Equal(t, uint64(1), latencies(s3)["counter/increment"].GetCount())
			assert.Equal(t, uint64(3), s3.GetRequests(), "Reset, GetStats, Increment")
		})
	}
}

// TestStatsDefaultSampling: by default one command in DefaultSampleEvery is
// timed, so fewer are measured than made, and GetStats says so.
func TestStatsDefaultSampling(t *testing.T) {
	const increments = 400
	ts := startServer(t, Config{Mode: "mutex"})
	for range increments {
		_, err := ts.counter.Increment(t.Context(), &pb.IncrementRequest{Delta: 1})
		require.NoError(t, err)
	}
	s := ts.stats(t)
	assert.Equal(t, uint32(DefaultSampleEvery), s.GetLatencySampleEvery())
	// 400 commands at 1/16: 25 expected; below 400 by a margin that random
	// sampling misses with negligible probability (P[all 400] = 16^-400).
	n := latencies(s)["counter/increment"].GetCount()
	assert.Less(t, n, uint64(increments/2), "sampled, not every command")
}

func latencies(s *pb.GetStatsResponse) map[string]*pb.StoreLatency {
	out := map[string]*pb.StoreLatency{}
	for _, l := range s.GetStoreLatency() {
		out[l.GetWorkload()+"/"+l.GetOp()] = l
	}
	return out
}

// TestQuantile checks the interpolation on a hand-built histogram.
func TestQuantile(t *testing.T) {
	bucket := func(upper float64, cum uint64) *dto.Bucket {
		return &dto.Bucket{UpperBound: proto.Float64(upper), CumulativeCount: proto.Uint64(cum)}
	}
	// 2 samples in (0,10], 4 in (10,20], 4 in (20,40].
	h := &dto.Histogram{SampleCount: proto.Uint64(10), Bucket: []*dto.Bucket{bucket(10, 2), bucket(20, 6), bucket(40, 10)}}
	tests := []struct {
		name    string
		h       *dto.Histogram
		q, most float64
		want    float64
	}{
		{"in the first bucket, from 0", h, 0.1, 100, 5}, // rank 1 of 2 in (0,10]
		{"at a bucket's top", h, 0.2, 100, 10},          // rank 2
		{"inside the second bucket", h, 0.5, 100, 17.5}, // rank 5: 10 + 10×3/4
		{"in the last bucket", h, 0.99, 100, 39.5},      // rank 9.9: 20 + 20×3.9/4
		{"the top", h, 1, 100, 40},                      // rank 10
		{"capped at the max", h, 0.99, 35, 35},          // 39.5 > 35
		{"capped low in the bucket", h, 0.5, 12, 12},    // 17.5 > 12
		{"q 0 with an empty first bucket", &dto.Histogram{SampleCount: proto.Uint64(4), Bucket: []*dto.Bucket{bucket(10, 0), bucket(20, 4)}}, 0, 100, 10},
		{"in the +Inf bucket", &dto.Histogram{SampleCount: proto.Uint64(10), Bucket: []*dto.Bucket{bucket(10, 5)}}, 0.9, 77, 77},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, quantile(tt.h, tt.q, tt.most), 1e-9)
		})
	}
	assert.True(t, math.IsNaN(quantile(&dto.Histogram{}, 0.5, 10)), "empty: NaN")
	assert.True(t, math.IsNaN(quantile(&dto.Histogram{Bucket: []*dto.Bucket{bucket(10, 0)}}, 0.5, 10)), "no samples: NaN")
}
