package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// tinyOptions is a run of every arm small enough for a test.
func tinyOptions(out string) Options {
	opt := DefaultOptions()
	opt.Out = out
	opt.Steps, opt.Problems, opt.Rounds = 2, 2, 2
	opt.Warmup, opt.EvalEvery = 2, 1
	opt.Test, opt.Samples = 6, 8
	opt.WarmupRows, opt.WarmupAggs = 8, 4
	return opt
}

func testLog() io.Writer {
	if testing.Verbose() {
		return os.Stderr
	}
	return io.Discard
}

// A few steps of every arm write every output, the arms are compared at the
// same generated-token ceiling, and the analysis covers every policy.
func TestSmokeRun(t *testing.T) {
	opt := tinyOptions(t.TempDir())
	st, err := RunStudy(opt, []uint64{1, 2}, testLog())
	if err != nil {
		t.Fatal(err)
	}
	s := st.Runs[0]
	if len(s.Arms) != len(studyArms) {
		t.Fatalf("%d arms, want %d", len(s.Arms), len(studyArms))
	}
	ceiling := s.Arms[0].Budget.Generated()
	for _, a := range s.Arms {
		if a.Budget.Generated() != ceiling || ceiling == 0 {
			t.Errorf("%s: generated-token ceiling %d, want %d", a.Spec.Name, a.Budget.Generated(), ceiling)
		}
		if len(a.History) != opt.Steps+1 {
			t.Errorf("%s: %d evaluations, want %d", a.Spec.Name, len(a.History), opt.Steps+1)
		}
		last := a.History[len(a.History)-1]
		if last.Generated <= 0 || last.Prefill <= 0 {
			t.Errorf("%s: %d tokens generated, %d read", a.Spec.Name, last.Generated, last.Prefill)
		}
		if a.Kept > a.Problems || a.Problems < opt.Steps*opt.Problems {
			t.Errorf("%s: kept %d of %d problems", a.Spec.Name, a.Kept, a.Problems)
		}
	}
	an := s.Analysis
	m := len(studyArms) + 1
	if len(an.Search) != m || len(an.Cross.Accuracy) != m || len(an.Cross.Accuracy[0]) != m || len(an.Probes) != m || len(an.Unique) != m {
		t.Fatalf("analysis of %d policies: %d searches, %d cross rows, %d probes", m, len(an.Search), len(an.Cross.Accuracy), len(an.Probes))
	}
	for i, sr := range an.Search {
		for k := 1; k < len(sr.Coverage); k++ {
			if sr.Coverage[k] < sr.Coverage[k-1] {
				t.Errorf("%s: coverage falls at k = %d", sr.Name, k+1)
			}
		}
		if an.Cross.Oracle[i] < an.Cross.Majority[i] {
			t.Errorf("%s: majority %v above the oracle %v", sr.Name, an.Cross.Majority[i], an.Cross.Oracle[i])
		}
		for j, acc := range an.Cross.Accuracy[i] {
			if acc < 0 || acc > 1 {
				t.Errorf("aggregator %d on %s's sets: accuracy %v", j, sr.Name, acc)
			}
		}
	}
	for _, f := range []string{"summary.txt", "summary.json", trainingPlot, coveragePlot, tokensPlot, prefillPlot, entropyPlot,
		"seed-1/summary.json", "seed-2/summary.json", "seed-1/base.weights", "seed-1/spiral.weights"} {
		if fi, err := os.Stat(filepath.Join(opt.Out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/short-summary.txt")

// The same seed gives the same summary, byte for byte: a run of a short
// configuration, and a run that only trains followed by -analyze on its
// saved weights, agree with each other and with the committed
// testdata/short-summary.txt (go test -update rewrites it).
func TestSameSeedSameSummary(t *testing.T) {
	var texts []string
	for _, trainOnly := range []bool{false, true} {
		opt := tinyOptions(t.TempDir())
		opt.TrainOnly = trainOnly
		st, err := RunStudy(opt, []uint64{3}, testLog())
		if err != nil {
			t.Fatal(err)
		}
		if trainOnly {
			if st, err = Reanalyze([]string{seedDir(opt.Out, 3)}, testLog()); err != nil {
				t.Fatal(err)
			}
		}
		texts = append(texts, st.text())
	}
	if texts[0] != texts[1] {
		t.Fatalf("a run of seed 3 and its weights measured again differ:\n%s\n---\n%s", texts[0], texts[1])
	}
	golden := filepath.Join("testdata", "short-summary.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(texts[0]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if texts[0] != string(want) {
		t.Errorf("seed 3 gives\n%s\nthe committed summary is\n%s", texts[0], want)
	}
}
