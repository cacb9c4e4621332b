package fleet

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
)

// The names of the checks Judge and JudgeReplicas return.
const (
	CheckMoney       = "money conserved"
	CheckNoNegative  = "no negative balance"
	CheckLedger      = "balances match the transfers"
	CheckNoAckLost   = "no acknowledged transfer lost"
	CheckAtMostOnce  = "each transfer applied at most once"
	CheckNoOverdraft = "no account overdrawn"
	CheckReadsAgree  = "reads agree"
)

// Tally counts a client's outcomes.
type Tally struct {
	Sent, Acked, Refused, Unresolved int
	// Unknown and Fenced count attempts (Outcome.Unknown, Outcome.Fenced).
	Unknown, Fenced int
}

// Count tallies outcomes.
func Count(outcomes []Outcome) Tally {
	var t Tally
	for _, o := range outcomes {
		t.Sent++
		t.Unknown += o.Unknown
		t.Fenced += o.Fenced
		switch {
		case o.Acked:
			t.Acked++
		case o.Refused != 0:
			t.Refused++
		default:
			t.Unresolved++
		}
	}
	return t
}

// Check audits the bank in the database at dsn, seeded from seed, against
// the outcomes of every transfer sent to it (each with a request id), and
// returns one record.Check per rule:
//
//   - money conserved: the balances sum to the seed's total;
//   - no negative balance;
//   - balances match the transfers: every account holds its seeded balance
//     plus what the recorded transfers moved (a lost update breaks it);
//   - no acknowledged transfer lost: each acknowledged id is stored, with
//     the sequence number its answer gave;
//   - each transfer applied at most once: as many transfers as stored ids,
//     and every stored id one the clients sent.
func Check(ctx context.Context, dsn string, seed workload.BankConfig, outcomes []Outcome) ([]record.Check, dbbank.Audit, error) {
	b, err := dbbank.Open(ctx, dbbank.Config{DSN: dsn, Pool: 1, Bank: seed})
	if err != nil {
		return nil, dbbank.Audit{}, err
	}
	defer b.Close()
	a, err := b.Audit(ctx, seed)
	if err != nil {
		return nil, a, err
	}
	return Judge(a, seed, outcomes), a, nil
}

// Judge is Check's rules over an audit already read.
func Judge(a dbbank.Audit, seed workload.BankConfig, outcomes []Outcome) []record.Check {
	var checks []record.Check
	add := func(name string, ok bool, format string, args ...any) {
		checks = append(checks, record.Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	total := int64(seed.Accounts) * seed.InitialBalance
	if init, err := workload.NewBank(seed); err == nil {
		if s, err := init.Apply(workload.BankCmd{Op: workload.BankSummary}); err == nil {
			total = s.Total
		}
	}
	add(CheckMoney, a.Total == total, "balances sum to %d; the seed's total is %d", a.Total, total)
	add(CheckNoNegative, a.MinBalance >= 0, "smallest balance %d", a.MinBalance)
	add(CheckLedger, len(a.Drift) == 0, "%d accounts differ from their seeded balance plus the recorded transfers: %v", len(a.Drift), a.Drift)
	sent := map[string]bool{}
	lost, wrong := 0, 0
	for _, o := range outcomes {
		sent[o.Cmd.ReqID] = true
		if !o.Acked {
			continue
		}
		seq, ok := a.ReqSeq[o.Cmd.ReqID]
		switch {
		case !ok:
			lost++
		case seq != o.Result.Seq:
			wrong++
		}
	}
	add(CheckNoAckLost, lost == 0 && wrong == 0, "%d acknowledged transfers not stored, %d stored under another sequence number", lost, wrong)
	stray := 0
	for id := range a.ReqSeq {
		if !sent[id] {
			stray++
		}
	}
	add(CheckAtMostOnce, a.Transfers == a.Requests && stray == 0, "%d transfers recorded, %d request ids stored, %d of them never sent", a.Transfers, a.Requests, stray)
	return checks
}

// Failed returns the checks that failed.
func Failed(checks []record.Check) []record.Check {
	var out []record.Check
	for _, c := range checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// Owners reads the ownership table of the database at dsn (routed-owner):
// each account's last owner, by replica name (Name), and its epoch.
func Owners(ctx context.Context, dsn string, seed workload.BankConfig) (map[uint32]dbbank.Ownership, error) {
	b, err := dbbank.Open(ctx, dbbank.Config{DSN: dsn, Pool: 1, Bank: seed})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.Owners(ctx)
}

// JudgeReplicas checks what a client can see of replicas that keep their
// state in memory, without a database to audit:
//
//   - no account overdrawn: the acknowledged transfers, applied to one bank
//     made from seed, leave no balance below zero (two replicas that each
//     let an account pay out its whole balance create money);
//   - reads agree: every read of one account, made after the transfers,
//     gave the same balance (replicas that each applied some of the
//     transfers disagree).
func JudgeReplicas(seed workload.BankConfig, outcomes []Outcome, reads map[uint32][]int64) []record.Check {
	var checks []record.Check
	add := func(name string, ok bool, format string, args ...any) {
		checks = append(checks, record.Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	net := map[uint32]int64{}
	for _, o := range outcomes {
		if o.Acked {
			net[o.Cmd.From] -= o.Cmd.Amount
			net[o.Cmd.To] += o.Cmd.Amount
		}
	}
	var over []uint32
	if init, err := workload.NewBank(seed); err == nil {
		for id := uint32(1); id <= seed.Accounts; id++ {
			r, err := init.Apply(workload.BankCmd{Op: workload.BankBalance, From: id})
			if err == nil && r.Balance+net[id] < 0 {
				over = append(over, id)
			}
		}
	}
	add(CheckNoOverdraft, len(over) == 0, "the acknowledged transfers overdraw accounts %v", over)
	var split []uint32
	for id, rs := range reads {
		for _, r := range rs {
			if r != rs[0] {
				split = append(split, id)
				break
			}
		}
	}
	add(CheckReadsAgree, len(split) == 0, "accounts read with different balances: %v", split)
	return checks
}
