package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/locklab/locklab/summary"
)

// maxTimeline bounds the intervals of a timeline: each holds a histogram.
const maxTimeline = 600

// timeline is one shard's calls cut into intervals of the window; the zero
// value records nothing.
type timeline struct {
	from    time.Time
	every   time.Duration
	buckets []bucket
}

type bucket struct {
	calls, ok, unexpected int64
	hist                  *hdrhistogram.Histogram
}

// timeline starts every shard's timeline at the window's start.
func (r *recorder) timeline(from time.Time, every time.Duration) {
	if every <= 0 {
		return
	}
	for _, s := range r.shards {
		s.tl = timeline{from: from, every: every}
	}
}

func (t *timeline) add(at time.Time, class outcome, latency time.Duration) {
	if t.every <= 0 || at.Before(t.from) {
		return
	}
	i := int(at.Sub(t.from) / t.every)
	if i >= maxTimeline {
		return
	}
	for len(t.buckets) <= i {
		t.buckets = append(t.buckets, bucket{})
	}
	b := &t.buckets[i]
	if b.hist == nil {
		// Two significant digits: a tenth of the run's full histogram,
		// enough to tell whether an interval's p99 met an objective.
		b.hist = hdrhistogram.New(summary.HistMinUs, summary.HistMaxUs, 2)
	}
	recordUs(b.hist, latency)
	b.calls++
	switch class {
	case outcomeOK:
		b.ok++
	case outcomeUnexpected:
		b.unexpected++
	}
}

// merge adds another shard's timeline.
func (t *timeline) merge(o timeline) {
	if o.every <= 0 {
		return
	}
	t.from, t.every = o.from, o.every
	for len(t.buckets) < len(o.buckets) {
		t.buckets = append(t.buckets, bucket{})
	}
	for i, b := range o.buckets {
		if b.hist == nil {
			continue
		}
		tb := &t.buckets[i]
		if tb.hist == nil {
			tb.hist = hdrhistogram.New(summary.HistMinUs, summary.HistMaxUs, 2)
		}
		tb.hist.Merge(b.hist)
		tb.calls += b.calls
		tb.ok += b.ok
		tb.unexpected += b.unexpected
	}
}

// points are the intervals inside the window, empty ones included.
func (t timeline) points(window time.Duration) []summary.TimelinePoint {
	if t.every <= 0 {
		return nil
	}
	n := int((window + t.every - 1) / t.every)
	out := make([]summary.TimelinePoint, 0, n)
	for i := range n {
		p := summary.TimelinePoint{StartS: (time.Duration(i) * t.every).Seconds(), DurationS: t.every.Seconds()}
		if i < len(t.buckets) && t.buckets[i].hist != nil {
			b := t.buckets[i]
			p.Calls, p.OK, p.UnexpectedErrors = b.calls, b.ok, b.unexpected
			p.P50Ms, p.P99Ms = ms(b.hist.ValueAtPercentile(50)), ms(b.hist.ValueAtPercentile(99))
		}
		out = append(out, p)
	}
	return out
}
