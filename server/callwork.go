package server

import (
	"context"
	"time"

	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/work"
)

// callWork spins a fixed amount of CPU in every data call before its
// handler runs (Config.CallWork): outside every store and lock, so that the
// CPU it adds to a call is its own, whatever the design does with the rest.
type callWork struct {
	spin func()
	data map[string]bool // full method names that spin
}

func newCallWork(d time.Duration, data []string) *callWork {
	c := &callWork{spin: work.NewSpinner(d, work.Calibrate()).Spin, data: map[string]bool{}}
	for _, m := range data {
		c.data[m] = true
	}
	return c
}

func (c *callWork) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if c.data[info.FullMethod] {
		c.spin()
	}
	return handler(ctx, req)
}
