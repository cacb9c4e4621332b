package storeverdict_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// The machine of storetest's Example, benchmarked as a user would: the
// example output in docs/storetest.md ("Your own state, the lab's verdict")
// is storeverdict's reading of rounds of this benchmark.

type tally struct{ votes map[string]int }

type vote struct{ name string }

func (t *tally) Apply(v vote) (int, error) {
	if v.name == "" {
		return 0, errors.New("tally: no name")
	}
	t.votes[v.name]++
	return t.votes[v.name], nil
}

func newTally() store.Machine[vote, int] { return &tally{votes: map[string]int{}} }

func genVote(r *rand.Rand) vote { return vote{[]string{"ada", "grace", ""}[r.IntN(3)]} }

func BenchmarkTally(b *testing.B) {
	storetest.Benchmark(b, newTally, genVote, storetest.Pars(1, 8))
}
