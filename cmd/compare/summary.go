package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// k6SummarySchema is the version of the JSON the k6 scripts' handleSummary
// writes (docs/k6.md); the runner refuses any other.
const k6SummarySchema = "locklab.k6-summary/v1"

// Trend is one k6 trend metric in milliseconds.
type Trend struct {
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Med   float64 `json:"med"`
	Max   float64 `json:"max"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Count float64 `json:"count,omitempty"`
}

// Rate is a k6 counter: its total and its per-second rate over the run.
type Rate struct {
	Count float64 `json:"count"`
	Rate  float64 `json:"rate"`
}

// ByteRate is a k6 data counter.
type ByteRate struct {
	Bytes float64 `json:"bytes"`
	Rate  float64 `json:"rate"`
}

// K6Summary is the locklab.k6-summary/v1 document.
type K6Summary struct {
	Schema            string         `json:"schema"`
	Script            string         `json:"script"`
	Config            map[string]any `json:"config"`
	TestRunDurationMs float64        `json:"test_run_duration_ms"`
	Iterations        Rate           `json:"iterations"`
	DataReceived      ByteRate       `json:"data_received"`
	DataSent          ByteRate       `json:"data_sent"`
	IterationDuration Trend          `json:"iteration_duration_ms"`
	GRPCReqDuration   struct {
		All    Trend            `json:"all"`
		ByCase map[string]Trend `json:"by_case"`
	} `json:"grpc_req_duration_ms"`
	Checks struct {
		Passes float64 `json:"passes"`
		Fails  float64 `json:"fails"`
	} `json:"checks"`
	ExpectedRefusals    float64 `json:"expected_refusals"`
	UnexpectedErrors    float64 `json:"unexpected_errors"`
	AckedIncrementDelta float64 `json:"acked_increment_delta"`
	DroppedIterations   float64 `json:"dropped_iterations"`
	VUsMax              float64 `json:"vus_max"`
}

func readK6Summary(path string) (*K6Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("k6 summary: %w", err)
	}
	var s K6Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("k6 summary %s: %w", path, err)
	}
	if s.Schema != k6SummarySchema {
		return nil, fmt.Errorf("k6 summary %s: schema %q, want %q", path, s.Schema, k6SummarySchema)
	}
	return &s, nil
}
