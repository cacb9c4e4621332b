package load_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/locklab/locklab/load"
)

// The bank mix a read ratio stands for, and the default mix, both from
// workloads.json.
func ExampleDefinitions_ReadRatioMix() {
	d := load.Workloads()
	fmt.Println(d.ReadRatioMix(0.9))
	m, _ := d.ParseMix(d.Bank.Mix)
	fmt.Println(len(m), "cases in the default mix")
	// Output:
	// balance-random:0.9,transfer:0.1
	// 5 cases in the default mix
}

// Zipf-skewed ranks: with θ = 0.99 over 1000 accounts, the hottest gets
// about 13% of the draws.
func ExampleZipf() {
	z, _ := load.NewZipf(1000, 0.99)
	r := rand.New(rand.NewPCG(1, 2))
	hot := 0
	for range 100_000 {
		if z.Next(r) == 0 {
			hot++
		}
	}
	fmt.Printf("rank 0: %.0f%%\n", float64(hot)/1000)
	// Output: rank 0: 13%
}
