package ghz

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/locklab/locklab/summary"
)

// Report is the part of ghz's JSON report (-O json) the summary needs.
type Report struct {
	Count     uint64        `json:"count"`
	Total     time.Duration `json:"total"` // the run's wall time
	EndReason string        `json:"endReason"`
	// StatusCodeDist counts every call by its status, as grpc-go's
	// codes.Code.String names it ("FailedPrecondition").
	StatusCodeDist map[string]int64 `json:"statusCodeDistribution"`
	Options        struct {
		Concurrency uint `json:"concurrency"`
		Connections uint `json:"connections"`
		RPS         uint `json:"rps"`
		Async       bool `json:"async"`
	} `json:"options"`
	// Details holds every call, refused or not (ghz keeps up to a million).
	Details []Detail `json:"details"`
}

// Detail is one call: when it started, how long it took, its status.
type Detail struct {
	Timestamp time.Time     `json:"timestamp"`
	Latency   time.Duration `json:"latency"`
	Status    string        `json:"status"`
}

// ReadReport reads ghz's JSON report.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("ghz: report: %w", err)
	}
	if rep.Count == 0 {
		return nil, errors.New("ghz: report: no call completed")
	}
	if uint64(len(rep.Details)) != rep.Count {
		return nil, fmt.Errorf("ghz: report: %d calls but %d details: every call's latency is needed (ghz keeps a million at most)", rep.Count, len(rep.Details))
	}
	return &rep, nil
}

// codeOf reads a status as ghz writes it: grpc-go's name of the code.
func codeOf(status string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if c.String() == status {
			return c, true
		}
	}
	return 0, false
}

// Summary is the run in the driver-neutral schema: every call is OK, an
// expected refusal (FAILED_PRECONDITION where the call expects some), or
// unexpected. version names ghz's build.
func (rep *Report) Summary(c Call, scenario, version string) (*summary.Summary, error) {
	s := &summary.Summary{
		Schema: summary.Schema, Driver: "ghz", DriverVersion: version,
		Workload: c.Workload, Model: "closed",
		Callers: int(rep.Options.Concurrency), Conns: int(rep.Options.Connections),
		ReadRatio: -1, DurationS: rep.Total.Seconds(), ByCode: map[string]int64{},
	}
	if rep.Options.RPS > 0 && rep.Options.Async {
		s.Model, s.Rate = "open", float64(rep.Options.RPS)
	}
	if c.Workload == "bank" {
		s.Scenario, s.Mix = scenario, c.Case+":1"
	}
	for status, n := range rep.StatusCodeDist {
		code, ok := codeOf(status)
		name := status
		if ok {
			name = summary.CodeName(code)
		}
		s.ByCode[name] += n
		switch {
		case ok && code == codes.OK:
			s.OK += n
		case ok && code == codes.FailedPrecondition && c.Refusals:
			s.ExpectedRefusals += n
		default:
			s.UnexpectedErrors += n
		}
	}
	s.Calls = int64(rep.Count)
	if s.Calls != s.OK+s.ExpectedRefusals+s.UnexpectedErrors {
		return nil, fmt.Errorf("ghz: report: %d calls, but its status counts add up to %d", s.Calls, s.OK+s.ExpectedRefusals+s.UnexpectedErrors)
	}
	if s.DurationS > 0 {
		s.CallsPerS = float64(s.Calls) / s.DurationS
	}
	h := summary.NewHistogram()
	var first time.Time
	for _, d := range rep.Details {
		if first.IsZero() || d.Timestamp.Before(first) {
			first = d.Timestamp
		}
	}
	for _, d := range rep.Details {
		us := max(int64(d.Latency/time.Microsecond), summary.HistMinUs)
		_ = h.RecordValue(min(us, summary.HistMaxUs)) // clamped into range: cannot fail
		s.PerSecond = addSecond(s.PerSecond, d.Timestamp.Add(d.Latency).Sub(first))
	}
	s.LatencyMs = summary.LatencyOf(h)
	s.Percentiles = summary.PercentilesOf(h)
	var err error
	if s.HDR, err = summary.EncodeHDR(h); err != nil {
		return nil, err
	}
	s.ByCase = map[string]summary.CaseStats{c.Case: {Count: s.Calls, P50Ms: s.LatencyMs.P50, P99Ms: s.LatencyMs.P99}}
	s.AckedIncrementDelta = s.OK * c.Delta
	if c.Transfer {
		s.AckedTransfers = s.OK
	}
	return s, s.Validate()
}

// addSecond counts one call ending at offset from the run's first start.
func addSecond(per []int64, offset time.Duration) []int64 {
	i := int(math.Max(0, math.Floor(offset.Seconds())))
	for len(per) <= i {
		per = append(per, 0)
	}
	per[i]++
	return per
}
