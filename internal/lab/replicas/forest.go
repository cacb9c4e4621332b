package replicas

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/chart"
)

// ForestFile is the page's picture, written beside it: every cost arm's
// calls/s against its baseline, with its interval.
const ForestFile = "forest.svg"

// Forest is the page's picture: every arm of the cost rounds (in memory,
// over the database, and every design behind the balancer) on calls/s against the baseline of its rounds,
// the geometric mean of the per-block ratios with its 95% interval. The
// arms are estimates, not verdicts: the plot draws no margin.
func Forest(res *Results) chart.Forest {
	fo := chart.Forest{
		Title:  "Replicas: calls/s against the baseline of each set of rounds, with its 95% interval",
		XLabel: "calls/s against the baseline (%)",
	}
	add := func(where string, rounds []Round, baseline string) {
		for _, c := range Compare(rounds, baseline) {
			if c.Metric != Metrics[0].Name || c.Arm == baseline || c.Err != "" {
				continue
			}
			fo.Rows = append(fo.Rows, chart.ForestRow{
				Label: fmt.Sprintf("%s: %s against %s", where, c.Arm, baseline),
				Ratio: c.Effect.GeoMean, Lo: c.Effect.Lo, Hi: c.Effect.Hi, Drawn: c.Effect.N > 1,
			})
		}
	}
	if res != nil {
		add("in memory", res.Cost, Baseline.Name())
		add("over the database", res.DBCost, res.DBBaseline)
		for _, d := range res.Designs {
			add("every design", res.DesignRounds(d), DesignBaseline(d).Name())
		}
	}
	return fo
}

// WritePage writes the page (ReportFile) into dir and, where the results
// have cost rounds, its picture (ForestFile); a page without a picture
// leaves no stale one behind.
func WritePage(dir string, res *Results) error {
	svg, err := Forest(res).SVG()
	if err != nil {
		return err
	}
	pic := filepath.Join(dir, ForestFile)
	if svg == nil {
		if err := os.Remove(pic); err != nil && !os.IsNotExist(err) {
			return err
		}
	} else if err := os.WriteFile(pic, svg, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ReportFile), []byte(Report(res)), 0o644)
}
