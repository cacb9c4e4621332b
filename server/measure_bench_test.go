package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// BenchmarkMeasuredStore prices the server's measurement: the same counter
// increments through a bare store and through the measuring wrapper the
// server puts around it, for each design, parallelism and sampling rate.
// The difference between measure=off and measure=every (or 1inN) is what
// one command pays to be measured; compare it with measure=off itself, the
// store's own cost. Run it with
//
//	go test -run '^$' -bench MeasuredStore -benchmem -cpu 1,2 ./server
func BenchmarkMeasuredStore(b *testing.B) {
	for _, design := range store.DesignNames() {
		for _, par := range []int{1, 64} {
			for _, every := range []uint64{0, 1, DefaultSampleEvery} {
				name := fmt.Sprintf("design=%s/par=%d/measure=", design, par)
				switch every {
				case 0:
					name += "off"
				case 1:
					name += "every"
				default:
					name += fmt.Sprintf("1in%d", every)
				}
				b.Run(name, func(b *testing.B) {
					s, err := store.New(design, store.Machine[workload.CounterCmd, int64](workload.NewCounter()), store.Config{})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					if every > 0 {
						s = measure(s, newMetrics(nil, every), wlCounter, func(c workload.CounterCmd) int { return int(c.Op) })
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
