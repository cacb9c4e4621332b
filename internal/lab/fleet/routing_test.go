package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// memoryDesigns are the registry's designs that serve the bank in memory.
func memoryDesigns(t *testing.T) []string {
	bank, err := workload.NewBank(seed)
	require.NoError(t, err)
	caps := store.CapabilitiesOf[workload.BankCmd, workload.BankResult](bank)
	var out []string
	for _, d := range store.Designs() {
		if d.Supports(caps) == nil {
			out = append(out, d.Name)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestRoundRobinOverMemory: two replicas of every in-memory design behind
// a round-robin balancer each keep a bank of their own. Account 1 (1,000)
// sends 600 twice and then 100: both 600s are acknowledged, one by each
// replica, which no single bank would do (the checker finds account 1
// overdrawn), and reads of account 1 alternate between the replicas'
// different balances. The control routes by key: every call about account
// 1 reaches one replica, the second 600 is refused for want of funds, and
// the reads agree.
func TestRoundRobinOverMemory(t *testing.T) {
	for _, design := range memoryDesigns(t) {
		for _, tt := range []struct {
			policy string
			fails  []string
		}{{balancer.RoundRobin, []string{CheckNoOverdraft, CheckReadsAgree}}, {balancer.Key, nil}} {
			t.Run(design+"/"+tt.policy, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				f := start(t, Config{Mode: design, Policy: tt.policy})
				var log []Outcome
				for i, amount := range []int64{600, 600, 100} {
					o := Transfer(ctx, f.Conn(), transfer(1, 2, amount, RequestID("c", i)), Retry{})
					require.True(t, o.Acked || o.Refused == codes.FailedPrecondition, "%+v", o)
					log = append(log, o)
				}
				reads := map[uint32][]int64{}
				for range 4 {
					b, err := Balance(ctx, f.Conn(), 1)
					require.NoError(t, err)
					reads[1] = append(reads[1], b)
				}
				checks := JudgeReplicas(seed, log, reads)
				assert.ElementsMatch(t, tt.fails, failedNames(checks), "%+v", checks)
			})
		}
	}
}

// readRounds reads every account through f rounds times and returns the
// accounts whose ownership changed after the first round: under
// routed-owner a read takes an account over on the replica that serves it,
// so an account no longer taken over is served by one replica.
func readRounds(ctx context.Context, t *testing.T, f *Fleet, dsn string, rounds int) []uint32 {
	t.Helper()
	var first map[uint32]uint64
	var moved []uint32
	for r := range rounds {
		for k := uint32(1); k <= seed.Accounts; k++ {
			_, err := Balance(ctx, f.Conn(), k)
			require.NoError(t, err)
		}
		own, err := Owners(ctx, dsn, seed)
		require.NoError(t, err)
		if r == 0 {
			first = map[uint32]uint64{}
			for k, o := range own {
				first[k] = o.Epoch
			}
			continue
		}
		for k := uint32(1); k <= seed.Accounts; k++ {
			if own[k].Epoch != first[k] && !contains(moved, k) {
				moved = append(moved, k)
			}
		}
	}
	return moved
}

func contains(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRoutedByKey: routed-owner behind a balancer that routes by key,
// under load: the checker finds nothing wrong, and afterwards every
// account is served by one replica (reads take nothing over again). The
// control is round robin: the bank is still whole (each takeover is
// fenced), but accounts keep moving between replicas.
func TestRoutedByKey(t *testing.T) {
	for _, tt := range []struct {
		policy string
		moves  bool
	}{{balancer.Key, false}, {balancer.RoundRobin, true}} {
		t.Run(tt.policy, func(t *testing.T) {
			dsn := newDSN(t)
			f := start(t, Config{Mode: ownerMode, DSN: dsn, Replicas: 3, Policy: tt.policy})
			ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
			defer cancel()
			log := load(ctx, f, 4)
			tally := Count(log)
			t.Logf("tally %+v", tally)
			assert.Zero(t, tally.Unresolved)
			checks, _, err := Check(t.Context(), dsn, seed, log)
			require.NoError(t, err)
			assert.Empty(t, failedNames(checks), "%+v", checks)
			rctx, rcancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer rcancel()
			moved := readRounds(rctx, t, f, dsn, 3)
			assert.Equal(t, tt.moves, len(moved) > 0, "accounts taken over again after the first round: %v", moved)
		})
	}
}

// TestReplicaAdded: routed-owner over two replicas, routed by key, after
// some transfers; a third replica is added (the balancer's consistent hash
// gets one more server). Reading every account then moves some of them,
// all to the new replica (about a third is the expectation; HAProxy's ring
// of three servers is lumpy, and the test logs the share), and the new
// owner reloads each from the database: every balance read equals the
// database's. The control drains the new replica at once: nothing moves,
// and the check of the move fails.
func TestReplicaAdded(t *testing.T) {
	bank := workload.BankConfig{Accounts: 60, InitialBalance: 1000}
	for _, tt := range []struct {
		name     string
		drainNew bool
	}{{"added", false}, {"control: added and drained", true}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			dsn := newDSN(t)
			f := start(t, Config{Mode: ownerMode, DSN: dsn, Bank: bank})
			for k := uint32(1); k <= bank.Accounts; k++ {
				o := Transfer(ctx, f.Conn(), transfer(k, 1+k%bank.Accounts, int64(k), RequestID("c", int(k))), Retry{})
				require.True(t, o.Acked, "%+v", o)
			}
			readAll := func() (map[uint32]int64, map[uint32]string) {
				got := map[uint32]int64{}
				for k := uint32(1); k <= bank.Accounts; k++ {
					b, err := Balance(ctx, f.Conn(), k)
					require.NoError(t, err)
					got[k] = b
				}
				own, err := Owners(ctx, dsn, bank)
				require.NoError(t, err)
				names := map[uint32]string{}
				for k, o := range own {
					names[k] = o.Owner
				}
				return got, names
			}
			_, before := readAll()
			n, err := f.Add()
			require.NoError(t, err)
			if tt.drainNew {
				require.NoError(t, f.Drain(n))
			}
			got, after := readAll()
			var moved, toNew int
			for k := uint32(1); k <= bank.Accounts; k++ {
				if after[k] != before[k] {
					moved++
					if after[k] == Name(n) {
						toNew++
					}
				}
			}
			t.Logf("%d of %d accounts moved, %d of them to the new replica", moved, bank.Accounts, toNew)
			_, audit, err := Check(ctx, dsn, bank, nil)
			require.NoError(t, err)
			assert.Equal(t, audit.Balances, got, "every balance read is the database's")
			ok := moved > 0 && moved == toNew && moved < int(bank.Accounts)
			assert.Equal(t, !tt.drainNew, ok, "moved %d, to the new replica %d", moved, toNew)
		})
	}
}
