package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A few steps of both arms on a tiny run write every output, and the arms
// are compared at the same generated-token ceiling.
func TestSmokeRun(t *testing.T) {
	opt := DefaultOptions()
	opt.Out = t.TempDir()
	opt.Steps, opt.Problems, opt.Rounds = 2, 2, 2
	opt.Warmup, opt.EvalEvery = 2, 1
	opt.Test, opt.Samples, opt.RSASteps = 3, 16, 1
	opt.WarmupRows, opt.WarmupAggregates = 8, 4
	var log io.Writer = io.Discard
	if testing.Verbose() {
		log = os.Stderr
	}
	s, err := Run(opt, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Arms) != 2 {
		t.Fatalf("%d arms, want 2", len(s.Arms))
	}
	if g0, g1 := s.Arms[0].Budget.Generated(), s.Arms[1].Budget.Generated(); g0 != g1 || g0 == 0 {
		t.Errorf("generated-token ceilings %d and %d, want equal and positive", g0, g1)
	}
	for _, a := range s.Arms {
		if len(a.History) != opt.Steps+1 {
			t.Errorf("%s: %d evaluations, want %d", a.Name, len(a.History), opt.Steps+1)
		}
		last := a.History[len(a.History)-1]
		if last.Generated <= 0 || len(last.Eval.Coverage) != opt.Samples {
			t.Errorf("%s: %d tokens generated, coverage curve of %d points", a.Name, last.Generated, len(last.Eval.Coverage))
		}
		for k := 1; k < len(last.Eval.Coverage); k++ {
			if last.Eval.Coverage[k] < last.Eval.Coverage[k-1] {
				t.Errorf("%s: coverage falls at k = %d", a.Name, k+1)
			}
		}
		for _, h := range []Point{a.History[0], last} {
			if len(h.Eval.RSA) != opt.RSASteps+1 {
				t.Errorf("%s step %d: RSA curve of %d points, want %d", a.Name, h.Step, len(h.Eval.RSA), opt.RSASteps+1)
			}
			for _, v := range h.Eval.RSA {
				if v < 0 || v > 1 {
					t.Errorf("%s step %d: RSA accuracy %v", a.Name, h.Step, v)
				}
			}
		}
		if a.Kept > a.Problems || a.Problems < opt.Steps*opt.Problems {
			t.Errorf("%s: kept %d of %d problems", a.Name, a.Kept, a.Problems)
		}
	}
	for _, f := range []string{"summary.txt", "summary.json", "pass1.png", "coverage.png", "diversity.png", "rsa.png"} {
		if fi, err := os.Stat(filepath.Join(opt.Out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}
