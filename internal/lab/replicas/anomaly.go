package replicas

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/lab/fleet"
	"github.com/locklab/locklab/internal/lab/record"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/workload"
)

// A Finding is what the checks found after one workload's run on a
// cluster. Each replica's own invariants (money conserved, no negative
// balance: the runner's checks of one server) are checked too; the
// anomalies are those between replicas.
type Finding struct {
	Workload string
	// Spread is how many keys were served by more than one replica: the
	// counter's one key, the bank's pairs.
	Spread int
	// Lost is the counter's acknowledged increments that the replica
	// holding the most does not show: what a reader misses, whichever
	// replica it asks.
	Lost int64
	// Overdrawn is how many accounts the acknowledged transfers took below
	// zero: money the bank created, which one server would have refused.
	Overdrawn int
	// Disagree is how many accounts a replica that served them holds at a
	// balance other than the acknowledged transfers give.
	Disagree int
	// ReplicaBroken is how many replicas fail their own invariants.
	ReplicaBroken int
	// Failed names the database audit's rules that failed (fleet.Check),
	// for replicas over one database.
	Failed []string `json:",omitempty"`
	// Fenced and Unknown are the attempts of transfers with request ids
	// that were refused with ABORTED (a replica had lost an account to
	// another) or ended without a definite answer: each was retried with
	// its id. They are a cost, not an anomaly.
	Fenced, Unknown int64 `json:",omitempty"`
}

// Anomalous says whether the cluster, seen as one service, broke what one
// server keeps.
func (f Finding) Anomalous() bool {
	return f.Spread > 0 || f.Lost > 0 || f.Overdrawn > 0 || f.Disagree > 0 || f.ReplicaBroken > 0 || len(f.Failed) > 0
}

// CounterState is what the counter's check reads: the increments
// acknowledged, and each replica's counter.
type CounterState struct {
	Acked  int64
	Counts []int64
}

// CheckCounter finds the counter's anomalies.
func CheckCounter(s CounterState) Finding {
	f := Finding{Workload: Counter}
	var most int64
	served := 0
	for _, c := range s.Counts {
		most = max(most, c)
		if c > 0 {
			served++
		}
	}
	if served > 1 {
		f.Spread = 1
	}
	f.Lost = max(0, s.Acked-most)
	return f
}

// BankState is what the bank's check reads: each account's change by the
// acknowledged transfers, and, per replica, each account's balance and
// whether the replica served a transfer of it (its history is not empty),
// and whether the replica holds its own invariants.
type BankState struct {
	Ledger   []int64   // by account − 1
	Balances [][]int64 // replica, account − 1
	Touched  [][]bool  // replica, account − 1
	Sound    []bool    // replica: money conserved, no negative balance
}

// CheckBank finds the bank's anomalies.
func CheckBank(s BankState) Finding {
	f := Finding{Workload: Bank}
	for a, d := range s.Ledger {
		if InitialBalance+d < 0 {
			f.Overdrawn++
		}
		disagree := false
		for r := range s.Balances {
			if s.Touched[r][a] && s.Balances[r][a] != InitialBalance+d {
				disagree = true
			}
		}
		if disagree {
			f.Disagree++
		}
	}
	for b := range len(s.Ledger) / 2 {
		served := 0
		for r := range s.Touched {
			if s.Touched[r][2*b] || s.Touched[r][2*b+1] {
				served++
			}
		}
		if served > 1 {
			f.Spread++
		}
	}
	for _, ok := range s.Sound {
		if !ok {
			f.ReplicaBroken++
		}
	}
	return f
}

// CheckDB finds the anomalies of the bank over one database: accounts the
// acknowledged transfers (ledger, by account − 1) took below zero, and the
// database audit's rules that failed (checks, fleet.Check's); idRules says
// whether the rules about request ids apply (KeepsRequestIDs). The
// replicas share one state, so nothing is spread or held apart.
func CheckDB(ledger []int64, checks []record.Check, idRules bool, fenced, unknown int64) Finding {
	f := CheckBank(BankState{Ledger: ledger})
	f.Fenced, f.Unknown = fenced, unknown
	for _, c := range fleet.Failed(checks) {
		if !idRules && slices.Contains(idChecks, c.Name) {
			continue
		}
		f.Failed = append(f.Failed, c.Name)
	}
	return f
}

// idChecks are the audit's rules about request ids, which hold only for a
// design that stores them.
var idChecks = []string{fleet.CheckNoAckLost, fleet.CheckAtMostOnce}

// BankSeed is the bank the driver's Reset makes, as the audit takes it.
var BankSeed = workload.BankConfig{Accounts: Accounts, InitialBalance: InitialBalance}

// AnomaliesDB resets the cluster's bank (every replica, so that each
// drops what it held), runs the bank's transfers with request ids through
// its front and audits the database at dsn.
func AnomaliesDB(ctx context.Context, cl *Cluster, dsn string, l Load) (Finding, Tally, error) {
	if l.Workload != Bank {
		return Finding{}, Tally{}, fmt.Errorf("replicas: over a database the study checks the %s, not %q", Bank, l.Workload)
	}
	if err := Reset(ctx, cl.Replicas()); err != nil {
		return Finding{}, Tally{}, err
	}
	l.IDs = true
	t, err := Drive(ctx, cl.Front(), l)
	if err != nil {
		return Finding{}, t, err
	}
	checks, _, err := fleet.Check(ctx, dsn, BankSeed, t.Outcomes)
	if err != nil {
		return Finding{}, t, err
	}
	return CheckDB(t.Ledger, checks, KeepsRequestIDs(cl.Config().Mode), t.Fenced, t.Unknown), t, nil
}

// ReadCounter reads each replica's counter.
func ReadCounter(ctx context.Context, replicas []*grpc.ClientConn, acked int64) (CounterState, error) {
	s := CounterState{Acked: acked}
	for i, cc := range replicas {
		st, err := pb.NewAdminServiceClient(cc).GetStats(ctx, &pb.GetStatsRequest{})
		if err != nil {
			return CounterState{}, fmt.Errorf("replica %d: %w", i, err)
		}
		s.Counts = append(s.Counts, st.GetCounterValue())
	}
	return s, nil
}

// ReadBank reads each replica's accounts, their histories and its own
// invariants, straight from the replica (every call keyed, as the replicas
// require).
func ReadBank(ctx context.Context, replicas []*grpc.ClientConn, ledger []int64) (BankState, error) {
	s := BankState{Ledger: ledger}
	for i, cc := range replicas {
		bank, admin := pb.NewBankServiceClient(cc), pb.NewAdminServiceClient(cc)
		st, err := admin.GetStats(ctx, &pb.GetStatsRequest{})
		if err != nil {
			return BankState{}, fmt.Errorf("replica %d: %w", i, err)
		}
		s.Sound = append(s.Sound, st.GetTotalBalance() == Accounts*InitialBalance && st.GetMinBalance() >= 0)
		bal, touched := make([]int64, len(ledger)), make([]bool, len(ledger))
		for a := range ledger {
			kctx := keyed(ctx, blockKey(a/2))
			b, err := bank.GetBalance(kctx, &pb.GetBalanceRequest{Account: uint32(a + 1)})
			if err != nil {
				return BankState{}, fmt.Errorf("replica %d: account %d: %w", i, a+1, err)
			}
			h, err := bank.GetHistory(kctx, &pb.GetHistoryRequest{Account: uint32(a + 1), Limit: 1})
			if err != nil {
				return BankState{}, fmt.Errorf("replica %d: account %d: %w", i, a+1, err)
			}
			bal[a], touched[a] = b.GetBalance(), len(h.GetTransfers()) > 0
		}
		s.Balances, s.Touched = append(s.Balances, bal), append(s.Touched, touched)
	}
	return s, nil
}
