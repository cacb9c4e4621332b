package load

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// Driver is a run's callers without the run's clock: tests and benchmarks
// make calls one at a time through the same path Run's callers take.
type Driver struct {
	conns   *conns
	callers []*caller
	rec     *recorder
}

// NewDriver dials cfg.Addr and sets the run up as Run does (Reset, GetStats,
// the shared keys), without starting any load.
func NewDriver(ctx context.Context, cfg Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conns, err := dialAll(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d := &Driver{conns: conns}
	p, err := setup(ctx, cfg, Workloads(), conns.clients(0))
	if err != nil {
		d.Close()
		return nil, err
	}
	d.rec = newRecorder(len(p.cases), min(cfg.Callers, 4*runtime.GOMAXPROCS(0)))
	d.callers = make([]*caller, cfg.Callers)
	for i := range d.callers {
		if d.callers[i], err = newCaller(i, p, conns.clients(i), d.rec.shard(i)); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// Call makes caller i's next call and records it, as the closed model does.
// It reports whether the answer was one the run would count as OK or as an
// expected refusal.
func (d *Driver) Call(ctx context.Context, i int) error {
	c := d.callers[i]
	t0 := time.Now()
	res := c.do(ctx)
	t1 := time.Now()
	c.rec.record(res, t1, t1.Sub(t0), 0)
	if res.class == outcomeUnexpected {
		return fmt.Errorf("caller %d: unexpected %v", i, res.code)
	}
	return nil
}

// Close closes the connections.
func (d *Driver) Close() { d.conns.close() }

// ServerProcessEnv, when set, makes the test binary serve the locklab
// server instead of running tests (TestMain): a benchmark measures the
// driver's CPU alone with the server in another process.
const ServerProcessEnv = "LOCKLAB_LOAD_TEST_SERVER"
