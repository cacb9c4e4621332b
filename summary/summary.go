package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"
)

// Schema is the driver-neutral summary every driver writes: cmd/load, the
// k6 scripts (k6/lib/summary.js) and the runner for h2load. Fields may be
// added, never renamed.
const Schema = "locklab.load-summary/v1"

// Summary is one load run, whatever drove it (docs/load.md).
type Summary struct {
	Schema        string `json:"schema"`
	Driver        string `json:"driver"` // "go", "k6" or "h2load"
	DriverVersion string `json:"driver_version"`

	Workload  string  `json:"workload"` // "counter", "bank" or "kv"
	Scenario  string  `json:"scenario"` // bank: "A", "B" or "C"; "" otherwise
	Mix       string  `json:"mix"`      // bank: the mix that ran; "" otherwise
	Model     string  `json:"model"`    // "closed" or "open"
	Callers   int     `json:"callers"`  // closed: concurrent callers (VUs); open: the bound on calls in flight
	Conns     int     `json:"conns"`
	Rate      float64 `json:"rate"`       // open: intended calls/s; 0 closed
	Skew      float64 `json:"skew"`       // Zipf θ of account and key choice; 0 uniform
	ReadRatio float64 `json:"read_ratio"` // -1: the workload's default mix

	DurationS float64 `json:"duration_s"` // the measured window, warm-up excluded

	Calls            int64            `json:"calls"` // completed in the window: OK + expected refusals + unexpected errors
	CallsPerS        float64          `json:"calls_per_s"`
	OK               int64            `json:"ok"`
	ExpectedRefusals int64            `json:"expected_refusals"`
	UnexpectedErrors int64            `json:"unexpected_errors"` // wrong status, wrong answer, or the call failed
	ByCode           map[string]int64 `json:"by_code"`           // status code name → calls; a wrong answer counts under its code

	ByCase    map[string]CaseStats `json:"by_case"`
	LatencyMs LatencyMs            `json:"latency_ms"`
	// Percentiles is the HDR curve: [percentile, ms] points, percentile
	// ascending up to 100.
	Percentiles [][2]float64 `json:"percentiles"`
	// HDR is hdrhistogram-go's Encode (V2, compressed, base64) of the
	// latency histogram in µs; "" when the driver has none. DecodeHDR reads
	// it; MergeHDR adds repetitions.
	HDR string `json:"hdr"`

	AckedIncrementDelta int64 `json:"acked_increment_delta"`
	AckedTransfers      int64 `json:"acked_transfers"`

	Dropped int64 `json:"dropped"` // open: calls that could not start
	Late    int64 `json:"late"`    // open: calls that waited over LateAfter for a free caller

	// LatencyOKMs is the latency of the calls answered OK alone (nil: the
	// driver does not separate them): under admission control the refused
	// calls are quick and would hide the accepted ones' tail.
	LatencyOKMs *LatencyMs `json:"latency_ok_ms,omitempty"`
	// Timeline is the window cut into intervals (cmd/load -timeline);
	// empty unless asked for.
	Timeline []TimelinePoint `json:"timeline,omitempty"`
	// PerSecond counts the calls that ended in each second of the window,
	// from its start (the last second may be partial): the run's rate over
	// time, and its peak over 1 s windows. Optional: nil where the driver
	// does not count them (k6, h2load).
	PerSecond []int64 `json:"per_second,omitempty"`

	// K6 is what only k6 reports (k6/lib/summary.js); nil for other drivers.
	K6 *K6Details `json:"k6,omitempty"`
}

// K6Details is the k6-only part of a k6 run's summary.
type K6Details struct {
	Executor          string  `json:"executor"`
	VUs               int     `json:"vus"`
	MaxVUs            *int    `json:"max_vus"`
	VUsMax            int     `json:"vus_max"` // the most VUs this k6 process had
	ExecutionSegment  *string `json:"execution_segment"`
	TestRunDurationMs float64 `json:"test_run_duration_ms"`
	Iterations        int64   `json:"iterations"`
	Checks            struct {
		Passes int64 `json:"passes"`
		Fails  int64 `json:"fails"`
	} `json:"checks"`
	DataReceivedBytes int64 `json:"data_received_bytes"`
	DataSentBytes     int64 `json:"data_sent_bytes"`
	// IterationMs is k6's iteration_duration: a whole iteration, the call
	// and the script's own work around it; nil in summaries written before
	// it was added.
	IterationMs *LatencyMs `json:"iteration_duration_ms,omitempty"`
	CheckBody   bool       `json:"check_body"`
	Reset       *bool      `json:"reset"`
}

// TimelinePoint is one interval of a run's window: the calls due (open
// model) or ended (closed) in it.
type TimelinePoint struct {
	StartS           float64 `json:"start_s"` // from the window's start
	DurationS        float64 `json:"duration_s"`
	Calls            int64   `json:"calls"`
	OK               int64   `json:"ok"`
	UnexpectedErrors int64   `json:"unexpected_errors"`
	P50Ms            float64 `json:"p50_ms"`
	P99Ms            float64 `json:"p99_ms"`
}

// CaseStats is one case's share of a run.
type CaseStats struct {
	Count int64   `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// LatencyMs is the latency distribution of the run's calls, in milliseconds.
type LatencyMs struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Histogram bounds: latencies are recorded in µs from 1 µs to one minute,
// with three significant digits (0.1% error).
const (
	HistMinUs   = 1
	HistMaxUs   = int64(time.Minute / time.Microsecond)
	histSigFigs = 3
)

// NewHistogram returns an empty latency histogram (µs) of the geometry every
// driver and MergeHDR use.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMinUs, HistMaxUs, histSigFigs)
}

// EncodeHDR renders h as the Summary's HDR field.
func EncodeHDR(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("summary: encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHDR reads a Summary's HDR field; nil for "".
func DecodeHDR(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("summary: decode histogram: %w", err)
	}
	return h, nil
}

// MergeHDR decodes and adds the histograms of several summaries (the
// repetitions of one run, say), for percentiles over all of them. A summary
// without a histogram (HDR "") is an error: its calls would be missing from
// the merged curve.
func MergeHDR(sums ...*Summary) (*hdrhistogram.Histogram, error) {
	out := NewHistogram()
	for _, s := range sums {
		h, err := DecodeHDR(s.HDR)
		if err != nil {
			return nil, err
		}
		if h == nil {
			return nil, fmt.Errorf("summary: %s summary of %s has no histogram to merge", s.Driver, s.Workload)
		}
		if dropped := out.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("summary: merge: %d values out of range", dropped)
		}
	}
	return out, nil
}

// ms turns a histogram value (µs) into milliseconds.
func ms(us int64) float64 { return float64(us) / 1000 }

// LatencyOf summarises a latency histogram (µs).
func LatencyOf(h *hdrhistogram.Histogram) LatencyMs {
	if h.TotalCount() == 0 {
		return LatencyMs{}
	}
	return LatencyMs{
		Min: ms(h.Min()), Mean: h.Mean() / 1000,
		P50: ms(h.ValueAtPercentile(50)), P90: ms(h.ValueAtPercentile(90)),
		P95: ms(h.ValueAtPercentile(95)), P99: ms(h.ValueAtPercentile(99)),
		P999: ms(h.ValueAtPercentile(99.9)), Max: ms(h.Max()),
	}
}

// PercentilesOf is h's percentile curve: the HDR iteration with 5 ticks per
// half distance (a point at 50, 75, 87.5, … percent), enough for a
// log-scaled percentile axis, ending at the maximum.
func PercentilesOf(h *hdrhistogram.Histogram) [][2]float64 {
	if h.TotalCount() == 0 {
		return nil
	}
	var out [][2]float64
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		p := [2]float64{b.Quantile, ms(b.ValueAt)}
		if n := len(out); n > 0 && out[n-1][0] == p[0] {
			out[n-1] = p
			continue
		}
		out = append(out, p)
	}
	return out
}

// Validate reports what makes s unusable: a wrong schema, or counts that do
// not add up.
func (s *Summary) Validate() error {
	var errs []error
	if s.Schema != Schema {
		errs = append(errs, fmt.Errorf("schema %q, want %q", s.Schema, Schema))
	}
	if s.Calls != s.OK+s.ExpectedRefusals+s.UnexpectedErrors {
		errs = append(errs, fmt.Errorf("calls %d != ok %d + expected refusals %d + unexpected errors %d",
			s.Calls, s.OK, s.ExpectedRefusals, s.UnexpectedErrors))
	}
	if s.Model != "closed" && s.Model != "open" {
		errs = append(errs, fmt.Errorf("model %q, want closed or open", s.Model))
	}
	return errors.Join(errs...)
}

// PeakPerSecond is the most calls that ended in one whole second of the
// window (PerSecond without its last, partial second when there are
// several); 0 when the driver did not count them.
func (s *Summary) PeakPerSecond() int64 {
	per := s.PerSecond
	if len(per) > 1 && float64(len(per)) > s.DurationS {
		per = per[:len(per)-1]
	}
	var peak int64
	for _, n := range per {
		peak = max(peak, n)
	}
	return peak
}

// Write writes s as indented JSON.
func (s *Summary) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}

// WriteFile writes s as indented JSON to path.
func (s *Summary) WriteFile(path string) error {
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}

// Read reads a locklab.load-summary/v1 document.
func Read(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("summary: %s: %w", path, err)
	}
	return s, nil
}

// Parse is Read on bytes.
func Parse(b []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// codeNames are the canonical names of the gRPC status codes, the keys of
// ByCode (k6/lib/core.js derives the same names from k6's constants).
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
}

// CodeName is the canonical name of a gRPC status code: "FAILED_PRECONDITION".
func CodeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("CODE_%d", c)
}
