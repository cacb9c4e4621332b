package replicas

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/internal/lab/fleet"
	"github.com/locklab/locklab/internal/lab/record"
)

// TestCheckCounter: increments all at one replica are no anomaly; spread
// over two, every replica misses some (the control: the same acked count,
// split).
func TestCheckCounter(t *testing.T) {
	one := CheckCounter(CounterState{Acked: 100, Counts: []int64{100, 0}})
	assert.False(t, one.Anomalous(), "%+v", one)
	split := CheckCounter(CounterState{Acked: 100, Counts: []int64{60, 40}})
	assert.True(t, split.Anomalous())
	assert.Equal(t, int64(40), split.Lost)
	assert.Equal(t, 1, split.Spread)
	// Applied but unacknowledged increments are not owed: no loss.
	assert.False(t, CheckCounter(CounterState{Acked: 90, Counts: []int64{100, 0}}).Anomalous())
}

// bankState is a state of Accounts accounts on replicas replicas where
// every pair lives on replica (pair mod replicas) and holds the ledger.
func bankState(replicas int, ledger []int64) BankState {
	s := BankState{Ledger: ledger}
	for r := range replicas {
		bal, touched := make([]int64, len(ledger)), make([]bool, len(ledger))
		for a := range ledger {
			bal[a] = InitialBalance
			if (a/2)%replicas == r {
				bal[a], touched[a] = InitialBalance+ledger[a], ledger[a] != 0
			}
		}
		s.Balances, s.Touched, s.Sound = append(s.Balances, bal), append(s.Touched, touched), append(s.Sound, true)
	}
	return s
}

// TestCheckBank: pairs each on one replica are no anomaly; each kind of
// anomaly is found when made (the controls).
func TestCheckBank(t *testing.T) {
	ledger := make([]int64, Accounts)
	ledger[0], ledger[1] = -30, 30
	ledger[2], ledger[3] = 50, -50
	assert.False(t, CheckBank(bankState(2, ledger)).Anomalous())

	tests := []struct {
		name string
		edit func(*BankState)
		want func(Finding) int
	}{
		{"overdrawn", func(s *BankState) { s.Ledger[0], s.Ledger[1] = -InitialBalance-10, InitialBalance+10 }, func(f Finding) int { return f.Overdrawn }},
		{"a balance off the ledger", func(s *BankState) { s.Balances[0][0]++ }, func(f Finding) int { return f.Disagree }},
		{"a pair on two replicas", func(s *BankState) { s.Touched[1][0] = true; s.Balances[1][0] = InitialBalance + s.Ledger[0] }, func(f Finding) int { return f.Spread }},
		{"a replica broken", func(s *BankState) { s.Sound[1] = false }, func(f Finding) int { return f.ReplicaBroken }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := bankState(2, append([]int64(nil), ledger...))
			tt.edit(&s)
			f := CheckBank(s)
			assert.True(t, f.Anomalous(), "%+v", f)
			assert.Equal(t, 1, tt.want(f), "%+v", f)
		})
	}
}

// TestExpected: a row is as expected when round robin shows anomalies and
// key routing none; the other two combinations, and errors, are not.
func TestExpected(t *testing.T) {
	bad := []Finding{{Workload: Counter, Lost: 3}}
	good := []Finding{{Workload: Counter}}
	assert.True(t, AnomalyRow{Keyed: false, Findings: bad}.Expected())
	assert.True(t, AnomalyRow{Keyed: true, Findings: good}.Expected())
	assert.False(t, AnomalyRow{Keyed: true, Findings: bad}.Expected())
	assert.False(t, AnomalyRow{Keyed: false, Findings: good}.Expected())
	assert.False(t, AnomalyRow{Keyed: true, Findings: good, Errors: 1}.Expected())
}

// TestBottleneck: the servers when at their quota, else the driver when at
// the CPUs left, else neither.
func TestBottleneck(t *testing.T) {
	assert.Equal(t, ServersBound, Bottleneck(0.95, 1.0, 2, 1))
	assert.Equal(t, DriverBound, Bottleneck(0.5, 0.95, 2, 1))
	assert.Equal(t, NeitherBound, Bottleneck(0.5, 0.5, 2, 1))
}

// TestCheckDB: over a database the anomalies are the audit's failed rules
// and the acknowledged overdrafts; fenced and unknown retries are a cost,
// not an anomaly. The rules about request ids count only for a design
// that stores them: the same failed rule is an anomaly with them (the
// control) and ignored without.
func TestCheckDB(t *testing.T) {
	ok := func(names ...string) []record.Check {
		var out []record.Check
		for _, n := range []string{fleet.CheckMoney, fleet.CheckNoNegative, fleet.CheckLedger, fleet.CheckNoAckLost, fleet.CheckAtMostOnce} {
			out = append(out, record.Check{Name: n, OK: !slices.Contains(names, n)})
		}
		return out
	}
	ledger := make([]int64, Accounts)
	f := CheckDB(ledger, ok(), true, 40, 3)
	assert.False(t, f.Anomalous(), "%+v", f)
	assert.Equal(t, int64(40), f.Fenced)
	assert.Equal(t, int64(3), f.Unknown)

	f = CheckDB(ledger, ok(fleet.CheckLedger), false, 0, 0)
	assert.True(t, f.Anomalous())
	assert.Equal(t, []string{fleet.CheckLedger}, f.Failed)

	assert.False(t, CheckDB(ledger, ok(fleet.CheckAtMostOnce, fleet.CheckNoAckLost), false, 0, 0).Anomalous(), "no ids stored: no id rule")
	f = CheckDB(ledger, ok(fleet.CheckAtMostOnce), true, 0, 0)
	assert.Equal(t, []string{fleet.CheckAtMostOnce}, f.Failed, "the control: with ids the rule counts")

	ledger[0] = -InitialBalance - 1
	f = CheckDB(ledger, ok(), true, 0, 0)
	assert.Equal(t, 1, f.Overdrawn)
	assert.True(t, f.Anomalous())
}

// TestVerdict: the study's rule, row by row. A design that claims safety
// holds its claim with no anomaly and no failed call, whatever the front;
// an in-memory control is as expected with anomalies under round robin and
// none under key routing; a design over the database without a claim is
// measured, never judged.
func TestVerdict(t *testing.T) {
	bad := []Finding{{Workload: Bank, Failed: []string{fleet.CheckLedger}}}
	good := []Finding{{Workload: Bank, Fenced: 9}}
	for _, tt := range []struct {
		row  AnomalyRow
		want string
	}{
		{AnomalyRow{DB: true, Claims: true, Findings: good}, ClaimHeld},
		{AnomalyRow{DB: true, Claims: true, Keyed: true, Findings: good}, ClaimHeld},
		{AnomalyRow{DB: true, Claims: true, Findings: bad}, ClaimBroken},
		{AnomalyRow{DB: true, Claims: true, Findings: good, Errors: 1}, ClaimBroken},
		{AnomalyRow{DB: true, Findings: bad}, Measured},
		{AnomalyRow{DB: true, Findings: good}, Measured},
		{AnomalyRow{Findings: bad}, AsExpected},
		{AnomalyRow{Keyed: true, Findings: good}, AsExpected},
		{AnomalyRow{Findings: good}, Unexpected},
		{AnomalyRow{Keyed: true, Findings: bad}, Unexpected},
	} {
		assert.Equal(t, tt.want, tt.row.Verdict(), "%+v", tt.row)
		assert.Equal(t, tt.want != ClaimBroken && tt.want != Unexpected, tt.row.Expected(), "%+v", tt.row)
	}
}
