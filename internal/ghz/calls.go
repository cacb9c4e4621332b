package ghz

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/load"
)

// Proto is the API's file, relative to the import path ProtoDir: ghz reads
// it rather than the server's reflection, so a run needs no extra round trip
// and works against a server without reflection.
const (
	ProtoDir = "proto"
	Proto    = "locklab/v1/locklab.proto"
)

// Call is one ghz invocation's method and call data. ghz's command line
// takes the data as JSON and renders it, as one Go template, for every
// call: template actions sit inside JSON strings ("{{ randomInt 1 1001 }}",
// which protobuf's JSON mapping reads as a number), and a variable set in one
// field is seen by the fields after it in encoding/json's key order.
type Call struct {
	Workload, Case string
	Method         string // package.Service/Method
	Data           string // JSON with ghz template actions
	// Refusals: FAILED_PRECONDITION is the answer the scenario expects of
	// some calls (an overdraft in bank scenarios B and C).
	Refusals bool
	// Delta is what one OK call adds to the counter; 0 for other cases.
	Delta int64
	// Transfer: an OK call is one acknowledged transfer.
	Transfer bool
}

// calls are the cases ghz can send, keyed workload/case. Every case of
// workloads.json has a row or is named in unsupported (calls_test.go).
var calls = map[string]func(d *load.Definitions) Call{
	"counter/increment": func(d *load.Definitions) Call {
		return Call{Method: "locklab.v1.CounterService/Increment",
			Data: fmt.Sprintf(`{"delta":%d}`, d.Counter.Defaults.Delta), Delta: d.Counter.Defaults.Delta}
	},
	// A random pair of distinct accounts: to = from + k + 1 (mod N), k in
	// 0..N-2, so that from == to (INVALID_ARGUMENT) never happens.
	"bank/transfer": func(d *load.Definitions) Call {
		n := d.Bank.Defaults.Accounts
		return Call{Method: "locklab.v1.BankService/TransferMoney", Transfer: true,
			Data: fmt.Sprintf(`{"from_account":"{{ $f := randomInt 1 %d }}{{ $f }}","to_account":"{{ add1 (mod (add $f (randomInt 0 %d)) %d) }}","amount":%d}`,
				n+1, n-1, n, d.Bank.Defaults.Amount)}
	},
	"bank/balance-one": func(d *load.Definitions) Call {
		return Call{Method: "locklab.v1.BankService/GetBalance", Data: fmt.Sprintf(`{"account":%d}`, d.Bank.Defaults.OneAccount)}
	},
	"bank/balance-random": func(d *load.Definitions) Call {
		return Call{Method: "locklab.v1.BankService/GetBalance", Data: fmt.Sprintf(`{"account":"{{ randomInt 1 %d }}"}`, d.Bank.Defaults.Accounts+1)}
	},
	"bank/history-one": func(d *load.Definitions) Call {
		return Call{Method: "locklab.v1.BankService/GetHistory",
			Data: fmt.Sprintf(`{"account":%d,"limit":%d}`, d.Bank.Defaults.OneAccount, d.Bank.Defaults.HistoryLimit)}
	},
	"bank/history-random": func(d *load.Definitions) Call {
		return Call{Method: "locklab.v1.BankService/GetHistory",
			Data: fmt.Sprintf(`{"account":"{{ randomInt 1 %d }}","limit":%d}`, d.Bank.Defaults.Accounts+1, d.Bank.Defaults.HistoryLimit)}
	},
	// A value of the workload's size (581 bytes: the rpcx seed's message)
	// under one of shared_keys keys. Its bytes are fixed: ghz renders the
	// template per call, and a fixed value keeps that cheap.
	"kv/put": func(d *load.Definitions) Call {
		value := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", d.KV.Defaults.ValueSize)))
		return Call{Method: "locklab.v1.KVService/Put",
			Data: fmt.Sprintf(`{"key":"k{{ randomInt 0 %d }}","value":"%s"}`, d.KV.Defaults.SharedKeys, value)}
	},
}

// unsupported are the cases ghz cannot send, and why.
var unsupported = map[string]string{
	"kv/get": "a Get of a key never put is NOT_FOUND, and ghz cannot put first: ghz drives kv with put",
}

// Lookup is the call of a workload's case; "" is the workload's first case
// ghz can send. scenario is the bank's (A, B, C; "" for the default).
func Lookup(workload, kase, scenario string) (Call, error) {
	d := load.Workloads()
	cases := d.Cases(workload)
	if cases == nil {
		return Call{}, fmt.Errorf("ghz: unknown workload %q; workloads: %s", workload, strings.Join(load.WorkloadNames(), ", "))
	}
	if kase == "" {
		i := slices.IndexFunc(cases, func(c string) bool { return calls[workload+"/"+c] != nil })
		if i < 0 {
			return Call{}, fmt.Errorf("ghz: no case of %s can be sent", workload)
		}
		kase = cases[i]
	}
	mk := calls[workload+"/"+kase]
	if mk == nil {
		if why, ok := unsupported[workload+"/"+kase]; ok {
			return Call{}, fmt.Errorf("ghz: %s/%s: %s", workload, kase, why)
		}
		return Call{}, fmt.Errorf("ghz: %s has no case %q; cases: %s", workload, kase, strings.Join(cases, ", "))
	}
	c := mk(d)
	c.Workload, c.Case = workload, kase
	if workload == "bank" && kase == d.Bank.ReadRatioCases.Write {
		if scenario == "" {
			scenario = d.Bank.Defaults.Scenario
		}
		sc, ok := d.Bank.Scenarios[scenario]
		if !ok {
			return Call{}, fmt.Errorf("ghz: bank scenario %q; scenarios: %s", scenario, strings.Join(d.ScenarioNames(), ", "))
		}
		c.Refusals = sc.RefusalExpected
	}
	return c, nil
}

// Args are ghz's flags that select the call: the proto, the method and the
// call data. Callers add the load's shape and the output.
func (c Call) Args() []string {
	return []string{"--insecure", "--import-paths", ProtoDir, "--proto", Proto, "--call", c.Method, "--data", c.Data}
}
