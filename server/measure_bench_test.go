package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// measurements are the ways BenchmarkMeasuredStore measures a store: not at
// all; the store's own clocks alone (store.Config.MeasureSerial: the serial
// resources' busy time, the commands' waits for them and the batches);
// the store time of every command, or of one in DefaultSampleEvery; and
// both as the server runs them.
var measurements = []struct {
	name         string
	latencyEvery uint64 // 0: no store-time measurement
	serial       bool
}{
	{"off", 0, false},
	{"serial", 0, true},
	{"every", 1, false},
	{fmt.Sprintf("1in%d", DefaultSampleEvery), DefaultSampleEvery, false},
	{"server", DefaultSampleEvery, true},
}

// BenchmarkMeasuredStore prices the server's measurements: the same counter
// increments through a bare store and through the measurements the server
// adds, for each design and parallelism. The difference between
// measure=off and measure=serial is what one command pays for the store's
// clocks (one lock hold, owner's command or combining pass in 16 timed, one
// command's wait in 16, the batches);
// between off and every (or 1inN), what it pays for its store time;
// measure=server is both, as the server runs. Compare each with
// measure=off itself, the store's own cost. Run it with
//
//	go test -run '^$' -bench MeasuredStore -benchmem -cpu 1,2 ./server
func BenchmarkMeasuredStore(b *testing.B) {
	for _, design := range store.DesignNames() {
		for _, par := range []int{1, 64} {
			for _, ms := range measurements {
				b.Run(fmt.Sprintf("design=%s/par=%d/measure=%s", design, par, ms.name), func(b *testing.B) {
					s, err := store.New(design, store.Machine[workload.CounterCmd, int64](workload.NewCounter()), store.Config{MeasureSerial: ms.serial})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					if ms.latencyEvery > 0 {
						s = measure(s, newMetrics(nil, ms.latencyEvery), 0 /* the counter, workloads[0] */, func(c workload.CounterCmd) int { return int(c.Op) })
					}
					benchIncrement(b, s, par)
				})
			}
		}
	}
}

func benchIncrement(b *testing.B, s store.Store[workload.CounterCmd, int64], par int) {
	ctx := context.Background()
	cmd := workload.CounterCmd{Op: workload.CounterIncrement, Delta: 1}
	b.ReportAllocs()
	b.SetParallelism(par)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Do(ctx, cmd); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
