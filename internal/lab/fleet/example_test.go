package fleet_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/locklab/locklab/internal/lab/fleet"
	"github.com/locklab/locklab/internal/lab/proc"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// Three routed-owner replicas over a private MariaDB behind HAProxy: one is
// killed, the transfers go on, and the checker audits the bank.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, err := proc.Build(dir)
	if err != nil {
		log.Fatal(err)
	}
	db, err := dbinst.StartMariaDB(ctx, dir+"/mariadb")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Stop()
	bank := workload.BankConfig{Accounts: 16, InitialBalance: 1000}
	f, err := fleet.Start(fleet.Config{Bin: bin, Mode: "routed-owner", Replicas: 3, DSN: db.DSN(), Bank: bank})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	var outcomes []fleet.Outcome
	for n := range 20 {
		if n == 10 {
			if err := f.Kill(1); err != nil {
				log.Fatal(err)
			}
		}
		cmd := workload.BankCmd{Op: workload.BankTransfer, From: uint32(1 + n%16), To: uint32(1 + (n+1)%16), Amount: 5, ReqID: fleet.RequestID("example", n)}
		outcomes = append(outcomes, fleet.Transfer(ctx, f.Conn(), cmd, fleet.Retry{}))
	}
	checks, _, err := fleet.Check(ctx, db.DSN(), bank, outcomes)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(fleet.Failed(checks)), "checks failed")
}
