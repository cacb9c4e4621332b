package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is one measured run as every driver reports it: the
// locklab.load-summary/v1 document (PLAN.md; written by cmd/load, by the k6
// scripts, and by the runner itself for h2load). The runner, the invariant
// checks and the report read only this.
type Result struct {
	Schema        string  `json:"schema"`
	Driver        string  `json:"driver"`
	DriverVersion string  `json:"driver_version"`
	Workload      string  `json:"workload"`
	Scenario      string  `json:"scenario"`
	Mix           string  `json:"mix"`
	Model         string  `json:"model"`
	Callers       int     `json:"callers"`
	Conns         int     `json:"conns"`
	Rate          float64 `json:"rate"`
	Skew          float64 `json:"skew"`
	ReadRatio     float64 `json:"read_ratio"`
	DurationS     float64 `json:"duration_s"`

	Calls            int64            `json:"calls"`
	CallsPerS        float64          `json:"calls_per_s"`
	OK               int64            `json:"ok"`
	ExpectedRefusals int64            `json:"expected_refusals"`
	UnexpectedErrors int64            `json:"unexpected_errors"`
	ByCode           map[string]int64 `json:"by_code"`
	ByCase           map[string]Case  `json:"by_case"`
	LatencyMs        Latency          `json:"latency_ms"`
	// Percentiles are points of the latency curve, [percentile, ms].
	Percentiles [][2]float64 `json:"percentiles"`
	// HDR is the latency histogram in µs, hdrhistogram-go's V2 encoding
	// (base64), mergeable across repetitions; "" when the driver has none.
	HDR string `json:"hdr"`

	AckedIncrementDelta int64 `json:"acked_increment_delta"`
	AckedTransfers      int64 `json:"acked_transfers"`
	Dropped             int64 `json:"dropped"`
	Late                int64 `json:"late"`
}

// Case is the latency of one kind of call in a mix.
type Case struct {
	Count float64 `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// Latency is a run's call latency in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// The schemas the runner reads: the driver-neutral one, and the k6 scripts'
// first one (docs/k6.md), which older results and older scripts write.
const (
	loadSummarySchema = "locklab.load-summary/v1"
	k6SummarySchema   = "locklab.k6-summary/v1"
)

// readSummary reads a driver's summary file in either schema.
func readSummary(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("summary %s: %w", path, err)
	}
	switch head.Schema {
	case loadSummarySchema:
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("summary %s: %w", path, err)
		}
		return &r, nil
	case k6SummarySchema:
		var s K6Summary
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("summary %s: %w", path, err)
		}
		return s.result(), nil
	}
	return nil, fmt.Errorf("summary %s: schema %q, want %q or %q", path, head.Schema, loadSummarySchema, k6SummarySchema)
}

// histogram decodes a result's HDR histogram; nil when it has none. The
// encoding is base64 already; a second base64 layer is tolerated.
func (r *Result) histogram() (*hdrhistogram.Histogram, error) {
	if r.HDR == "" {
		return nil, nil
	}
	h, err := hdrhistogram.Decode([]byte(r.HDR))
	if err == nil {
		return h, nil
	}
	if inner, err2 := base64.StdEncoding.DecodeString(r.HDR); err2 == nil {
		if h, err2 := hdrhistogram.Decode(inner); err2 == nil {
			return h, nil
		}
	}
	return nil, fmt.Errorf("hdr: %w", err)
}

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

// result carries a k6-summary/v1 document into the driver-neutral schema.
// k6's trends have no p99.9 and no histogram: the percentile curve is the
// points it has.
func (s *K6Summary) result() *Result {
	all := s.GRPCReqDuration.All
	r := &Result{
		Schema: loadSummarySchema, Driver: "k6", Workload: s.Script,
		DurationS: s.TestRunDurationMs / 1000,
		Calls:     int64(all.Count),
		LatencyMs: Latency{Min: all.Min, Mean: all.Avg, P50: all.Med, P90: all.P90, P95: all.P95, P99: all.P99, Max: all.Max},
		Percentiles: [][2]float64{
			{0, all.Min}, {50, all.Med}, {90, all.P90}, {95, all.P95}, {99, all.P99}, {100, all.Max},
		},
		ExpectedRefusals:    int64(s.ExpectedRefusals),
		UnexpectedErrors:    int64(s.UnexpectedErrors),
		AckedIncrementDelta: int64(s.AckedIncrementDelta),
		Dropped:             int64(s.DroppedIterations),
		Callers:             int(s.VUsMax),
	}
	r.OK = r.Calls - r.ExpectedRefusals - r.UnexpectedErrors
	if r.DurationS > 0 {
		r.CallsPerS = float64(r.Calls) / r.DurationS
	}
	if m, ok := s.Config["model"].(string); ok {
		r.Model = m
	}
	if sc, ok := s.Config["scenario"].(string); ok {
		r.Scenario = sc
	}
	if len(s.GRPCReqDuration.ByCase) > 0 {
		r.ByCase = map[string]Case{}
		for name, t := range s.GRPCReqDuration.ByCase {
			r.ByCase[name] = Case{Count: t.Count, P50Ms: t.Med, P99Ms: t.P99}
		}
	}
	return r
}
