package plan

import (
	"fmt"
	"slices"
)

// Ledger is the name of the factor that traces the server over a run's
// measured window and puts every call's time in states (the latency
// ledger, package internal/lab/ledger): "off" runs as ever; "on" traces
// every run. Tracing costs the server time (every scheduling event
// written, the Prometheus metrics its endpoint turns on), so "off,on" —
// every combination run both ways in every block — is how that cost is
// measured.
const Ledger = "ledger"

// LedgerOn is the value that traces a run.
const LedgerOn = "on"

const ledgerOff = "off"

// ledgerFactor is the row of Factors, beside attribution and, like it,
// inside the others, so that a combination's traced and untraced runs are
// close in time inside their block. At its default it is left out of keys
// and headings: reports of studies that never traced read as before.
var ledgerFactor = &Factor{
	Name: Ledger, JSON: "ledger", Label: "ledger", Default: ledgerOff,
	Usage: "comma-separated latency ledger of the server: off; on (every run's execution trace over the measured window, " +
		"each call's time put in states: running, runnable, blocked on a channel or a lock, ...); " +
		"off,on runs both in every block, to measure what tracing costs",
	Parse: func(it string) (string, error) {
		if it == ledgerOff || it == LedgerOn {
			return it, nil
		}
		return "", fmt.Errorf("-ledger: %q: want off or on", it)
	},
	Encode:      func(v string) any { return v },
	Decode:      decodeString,
	ID:          func(string) string { return "-ledger" },
	OmitDefault: true,
}

// Ledgers says whether any value of the space traces a run.
func (sp Space) Ledgers() bool { return slices.Contains(sp.Values(Ledger), LedgerOn) }
