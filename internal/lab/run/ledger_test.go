package run

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/internal/lab/plan"
)

// TestLedgerConfig: -ledger off,on lays out every combination both ways in
// every block, the traced runs only are traced, each adds the trace's
// reading to the plan's estimate, and -profile beside it is refused.
func TestLedgerConfig(t *testing.T) {
	edit := func(factors map[string]string) func(o *Options) {
		return func(o *Options) {
			o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,noop", "go", "10", 2
			o.Factors = factors
			o.Duration = 1500 * time.Millisecond
		}
	}
	cfg := testConfig(t, edit(map[string]string{plan.Ledger: "off,on"}))
	specs := layout(cfg)
	traced := 0
	for _, s := range specs {
		if ledgers(s) {
			traced++
		}
	}
	assert.Len(t, specs, 8, "2 modes × 2 blocks × off,on")
	assert.Equal(t, 4, traced)
	off := testConfig(t, edit(nil))
	assert.Equal(t, 2*PlanDuration(off, layout(off))+4*ledgerRead, PlanDuration(cfg, specs),
		"the runs twice, and each traced run reads its trace")

	o := defaultOptions()
	o.Factors = map[string]string{plan.Ledger: "on"}
	o.Profile = "1"
	_, err := NewConfig(o, 2)
	assert.ErrorContains(t, err, "-profile and -ledger")
	o.Factors = map[string]string{plan.Ledger: "maybe"}
	o.Profile = ""
	_, err = NewConfig(o, 2)
	assert.ErrorContains(t, err, `-ledger: "maybe": want off or on`)
}
