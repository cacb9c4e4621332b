package run

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/protobuf/proto"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/load"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// h2load sends one fixed request body per run, so it drives the counter's
// Increment with a fixed delta. It cannot read gRPC trailers (a refused call
// is still an HTTP 200 to it), so every run's counter is checked through the
// API against the calls it completed: checkInvariants owes exactly
// succeeded × h2loadDelta.
const (
	h2loadDelta = 1
	h2loadPath  = "/locklab.v1.CounterService/Increment"
)

// grpcFrame is a gRPC length-prefixed message: a compression flag (0), the
// length as 4 bytes big-endian, the protobuf bytes.
func grpcFrame(m proto.Message) ([]byte, error) {
	body, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	frame := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
	return append(frame, body...), nil
}

// h2loadShape spreads a level of concurrent calls over connections: one
// connection per call unless -conns says otherwise, as a k6 VU would.
func h2loadShape(level, conns int) (clients, streams int) {
	clients = level
	if conns > 0 {
		clients = min(conns, level)
	}
	return clients, (level + clients - 1) / clients
}

// h2loadDriver is nghttp2's h2load sending one fixed gRPC frame: the
// counter's ceiling driver.
type h2loadDriver struct{}

func (h2loadDriver) Name() string { return "h2load" }
func (h2loadDriver) Doc() string {
	return "nghttp2's h2load sending one fixed gRPC frame: the counter's ceiling driver"
}
func (h2loadDriver) Binary(cfg Config) (path, hint string) { return cfg.H2load, "make deb-h2load" }

// Serves: one fixed frame is one Increment; and h2load cannot time calls
// from their intended start, so the closed model only.
func (h2loadDriver) Serves(wl plan.Workload, model string) bool {
	return wl.Kind == "counter" && model == "closed"
}

func (h2loadDriver) Version(cfg Config) string { return firstLine(output(cfg.H2load, "--version")) }

// Command: the warm-up runs for its duration; the measured run sends the
// number of calls the warm-up's rate fits into the duration (-n), so that
// every call it sent has completed when it exits and the counter check is
// exact (with -D, calls in flight at the end are applied but not counted).
func (h2loadDriver) Command(cfg Config, job Job) ([]string, []string, error) {
	frame, err := grpcFrame(&locklabv1.IncrementRequest{Delta: h2loadDelta})
	if err != nil {
		return nil, nil, err
	}
	framePath := filepath.Join(job.Scratch, "increment.bin")
	if err := os.WriteFile(framePath, frame, 0o644); err != nil {
		return nil, nil, err
	}
	clients, streams := h2loadShape(job.Spec.Level, cfg.Conns)
	threads := max(1, min(len(job.Place.Driver), clients))
	argv := []string{cfg.H2load, "-c", strconv.Itoa(clients), "-m", strconv.Itoa(streams), "-t", strconv.Itoa(threads),
		"-d", framePath, "-H", "content-type: application/grpc", "-H", "te: trailers"}
	argv = append(argv, job.Spec.Factors.H2loadArgs()...)
	if job.Warmup || job.Prior == nil {
		argv = append(argv, "-D", fmt.Sprintf("%dms", job.Duration.Milliseconds()), "--log-file", h2loadLogPath(job))
	} else {
		n := int64(math.Round(job.Prior.CallsPerS * job.Duration.Seconds()))
		argv = append(argv, "-n", strconv.FormatInt(max(n, int64(clients)), 10), "--log-file", h2loadLogPath(job))
	}
	return append(argv, "http://"+job.Addr+h2loadPath), nil, nil
}

func h2loadLogPath(job Job) string {
	if job.Warmup {
		return filepath.Join(job.Scratch, "warmup-requests.tsv")
	}
	return filepath.Join(job.Scratch, "requests.tsv")
}

// Result reads h2load's text output (its log) and, for a measured run, its
// per-request log, and writes the summary as the other drivers do.
func (d h2loadDriver) Result(cfg Config, job Job) (*summary.Summary, error) {
	text, err := os.ReadFile(job.Log)
	if err != nil {
		return nil, err
	}
	out, err := parseH2loadOutput(string(text))
	if err != nil {
		return nil, err
	}
	res := out.result(job.Spec, cfg.Conns)
	res.DriverVersion = strings.TrimPrefix(d.Version(cfg), "h2load ")
	if f, err := os.Open(h2loadLogPath(job)); err == nil {
		h, late, err := readH2loadLog(f, nil)
		f.Close()
		if err != nil {
			return nil, err
		}
		if err := setHistogram(res, h); err != nil {
			return nil, err
		}
		if job.Warmup && late > 0 {
			// A fresh server is slow at first: the rate of the warm-up's
			// second half is what sizes the measured run.
			res.CallsPerS = late
		}
		os.Remove(h2loadLogPath(job)) // megabytes, and the histogram holds it
	}
	if job.Summary != "" {
		if err := record.WriteJSON(job.Summary, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// h2loadOutput is what h2load prints at the end of a run.
type h2loadOutput struct {
	Version                                    string
	Seconds, ReqPerSec                         float64
	Total, Started, Done, Succeeded            int64
	Failed, Errored, Timeout                   int64
	Status2xx, Status3xx, Status4xx, Status5xx int64
	MinMs, MaxMs, MeanMs                       float64
}

var (
	h2Finished = regexp.MustCompile(`(?m)^finished in ([0-9.]+)(s|ms), ([0-9.]+) req/s`)
	h2Requests = regexp.MustCompile(`(?m)^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	h2Codes    = regexp.MustCompile(`(?m)^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
	h2Time     = regexp.MustCompile(`(?m)^time for request:\s+(\S+)\s+(\S+)\s+(\S+)`)
	h2Version  = regexp.MustCompile(`h2load nghttp2/(\S+)`)
)

// parseH2loadOutput reads the summary lines of h2load's output.
func parseH2loadOutput(text string) (h2loadOutput, error) {
	var o h2loadOutput
	m := h2Finished.FindStringSubmatch(text)
	r := h2Requests.FindStringSubmatch(text)
	c := h2Codes.FindStringSubmatch(text)
	if m == nil || r == nil || c == nil {
		return o, fmt.Errorf("h2load output has no 'finished in', 'requests:' or 'status codes:' line: %q", lastLines(text, 5))
	}
	o.Seconds, _ = strconv.ParseFloat(m[1], 64)
	if m[2] == "ms" {
		o.Seconds /= 1000
	}
	o.ReqPerSec, _ = strconv.ParseFloat(m[3], 64)
	ints := func(dst []*int64, src []string) {
		for i, p := range dst {
			*p, _ = strconv.ParseInt(src[i], 10, 64)
		}
	}
	ints([]*int64{&o.Total, &o.Started, &o.Done, &o.Succeeded, &o.Failed, &o.Errored, &o.Timeout}, r[1:])
	ints([]*int64{&o.Status2xx, &o.Status3xx, &o.Status4xx, &o.Status5xx}, c[1:])
	if t := h2Time.FindStringSubmatch(text); t != nil {
		var err error
		for i, p := range []*float64{&o.MinMs, &o.MaxMs, &o.MeanMs} {
			if *p, err = parseH2Duration(t[i+1]); err != nil {
				return o, err
			}
		}
	}
	if v := h2Version.FindStringSubmatch(text); v != nil {
		o.Version = v[1]
	}
	return o, nil
}

// parseH2Duration reads h2load's durations ("38us", "12.18ms", "1.2s") in ms.
func parseH2Duration(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		ms     float64
	}{{"us", 1e-3}, {"ms", 1}, {"s", 1000}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("h2load duration %q: %w", s, err)
			}
			return v * u.ms, nil
		}
	}
	return 0, fmt.Errorf("h2load duration %q: no unit", s)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// result is the run in the driver-neutral schema. Calls that h2load did not
// see succeed (failed, errored, timed out, or not 2xx) are unexpected errors.
func (o h2loadOutput) result(spec plan.Spec, conns int) *summary.Summary {
	clients, _ := h2loadShape(spec.Level, conns)
	ok := min(o.Succeeded, o.Status2xx)
	res := &summary.Summary{
		Schema: summary.Schema, Driver: "h2load", DriverVersion: o.Version,
		Workload: spec.WorkloadDef().Kind, Model: "closed", Callers: spec.Level, Conns: clients,
		ReadRatio: -1, // the counter has no reads to mix
		DurationS: o.Seconds, Calls: o.Done, CallsPerS: o.ReqPerSec,
		OK: ok, UnexpectedErrors: o.Done - ok,
		ByCode:              map[string]int64{"HTTP 2xx": o.Status2xx, "HTTP 3xx": o.Status3xx, "HTTP 4xx": o.Status4xx, "HTTP 5xx": o.Status5xx},
		LatencyMs:           summary.LatencyMs{Min: o.MinMs, Mean: o.MeanMs, Max: o.MaxMs},
		AckedIncrementDelta: ok * h2loadDelta,
	}
	res.ByCase = map[string]summary.CaseStats{incrementCase(): {Count: o.Done}}
	return res
}

// readH2loadLog reads h2load's per-request log (--log-file: start time µs
// since the epoch, status, µs to the end of the response) into a histogram of
// µs, and the rate of completed calls over the log's second half. Failed
// streams (status -1) carry no latency. keep, when not nil, takes only the
// calls it keeps by their end (µs since the epoch).
func readH2loadLog(r io.Reader, keep func(endUs int64) bool) (*hdrhistogram.Histogram, float64, error) {
	h := summary.NewHistogram() // the Go driver's geometry: the two merge
	var ends []int64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 {
			return nil, 0, fmt.Errorf("h2load log line %d: %q: want 3 tab-separated columns", line, sc.Text())
		}
		if f[1] == "-1" {
			continue
		}
		start, err1 := strconv.ParseInt(f[0], 10, 64)
		us, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, 0, fmt.Errorf("h2load log line %d: %q: not whole numbers", line, sc.Text())
		}
		if keep != nil && !keep(start+us) {
			continue
		}
		_ = h.RecordValue(max(us, 1)) // beyond the range: clipped, as any HDR recorder does
		ends = append(ends, start+us)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	return h, lateRate(ends), nil
}

// lateRate is the rate of calls ending in the second half of the span of
// end times (µs), in calls/s; 0 when the span is too short to tell.
func lateRate(ends []int64) float64 {
	if len(ends) < 2 {
		return 0
	}
	lo, hi := slices.Min(ends), slices.Max(ends)
	mid := lo + (hi-lo)/2
	if hi-mid < 1000 {
		return 0
	}
	n := 0
	for _, e := range ends {
		if e >= mid {
			n++
		}
	}
	return float64(n) / (float64(hi-mid) / 1e6)
}

// incrementCase is the counter's one case, as workloads.json names it.
func incrementCase() string { return load.Workloads().Counter.Cases[0] }

// setHistogram fills a summary's latency figures, curve and HDR field from a
// histogram in µs, as the Go driver does.
func setHistogram(r *summary.Summary, h *hdrhistogram.Histogram) error {
	if h.TotalCount() == 0 {
		return nil
	}
	r.LatencyMs = summary.LatencyOf(h)
	r.Percentiles = summary.PercentilesOf(h)
	if c, ok := r.ByCase[incrementCase()]; ok {
		c.P50Ms, c.P99Ms = r.LatencyMs.P50, r.LatencyMs.P99
		r.ByCase[incrementCase()] = c
	}
	enc, err := summary.EncodeHDR(h)
	if err != nil {
		return fmt.Errorf("h2load: %w", err)
	}
	r.HDR = enc
	return nil
}
