package attrib_test

import (
	"fmt"
	"time"

	"github.com/google/pprof/profile"

	"github.com/locklab/locklab/internal/lab/attrib"
)

func ExampleClassify() {
	// Stacks leaf first: the mechanism nearest the leaf wins over the code
	// that called it; the runtime's lock goes to the mechanism that took it.
	fmt.Println(attrib.Classify([]string{
		"runtime.chansend", "runtime.chansend1",
		"github.com/locklab/locklab/store.(*facade[...]).Do",
	}))
	fmt.Println(attrib.Classify([]string{
		"runtime.lock2", "runtime.lock", "runtime.findRunnable", "runtime.schedule",
	}))
	fmt.Println(attrib.Classify([]string{
		"runtime.mallocgc", "google.golang.org/protobuf/proto.MarshalOptions.marshal",
		"google.golang.org/grpc.(*Server).processRPC",
	}))
	// Output:
	// channels
	// scheduler
	// protobuf
}

func ExamplePerCall() {
	// A profile as runtime/pprof writes one: two stacks, 150 and 50
	// samples of 10 ms, taken while the server answered 100,000 calls.
	spin := &profile.Function{ID: 1, Name: "github.com/locklab/locklab/internal/work.spin"}
	send := &profile.Function{ID: 2, Name: "runtime.chansend"}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     int64(10 * time.Millisecond),
		Function:   []*profile.Function{spin, send},
		Location: []*profile.Location{
			{ID: 1, Line: []profile.Line{{Function: spin}}},
			{ID: 2, Line: []profile.Line{{Function: send}}},
		},
	}
	p.Sample = []*profile.Sample{
		{Location: p.Location[:1], Value: []int64{150, int64(1500 * time.Millisecond)}},
		{Location: p.Location[1:], Value: []int64{50, int64(500 * time.Millisecond)}},
	}
	b, err := attrib.Fold(p)
	if err != nil {
		panic(err)
	}
	c, err := attrib.PerCall(b, 100_000)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d samples, %v of CPU: %.0f µs per call\n", b.Samples, b.Total, c.Total)
	for _, name := range attrib.CategoryNames() {
		if c.Micro[name] > 0 {
			fmt.Printf("%-8s %4.1f µs  %3.0f%%\n", name, c.Micro[name], 100*b.Share(name))
		}
	}
	// Output:
	// 200 samples, 2s of CPU: 20 µs per call
	// store    15.0 µs   75%
	// channels  5.0 µs   25%
}
