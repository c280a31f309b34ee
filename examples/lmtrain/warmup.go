package main

import (
	"fmt"
	"io"
	"math/rand/v2"
)

// WarmupConfig is the supervised warm-up that makes the base model every
// arm starts from: the format, a partly right search habit (demoTrace with
// Correct, a second proposal with probability Again) and an aggregator that
// repeats one of its candidates, a hit with probability Check
// (demoAggregation). It stands in for a pretrained model.
type WarmupConfig struct {
	Steps, SearchRows, AggregateRows int
	Correct, Again, Check            float64
	SetSize                          int
	// Search is the grammar of the demonstrated traces (room for every
	// arm's proposals), Aggregation that of aggregation outputs.
	Search, Aggregation Grammar
}

// Warmup trains p on demonstrations, Steps Adam steps of mean cross-entropy
// over the demonstrated output tokens, drawn from r with no problem of
// exclude, and writes one progress line every 50 steps to log.
func Warmup(p *Policy, r *rand.Rand, cfg WarmupConfig, exclude map[int64]bool, log io.Writer) error {
	for step := range cfg.Steps {
		g := cfg.Search
		search := Part{SeqLen: g.searchRowLen(), Grammar: g}
		for _, pr := range NewProblems(r, cfg.SearchRows, exclude) {
			search.Rows = append(search.Rows, Row{Prompt: searchPrompt(pr), Output: g.demoTrace(r, pr, cfg.Correct, cfg.Again)})
		}
		ga := cfg.Aggregation
		agg := Part{SeqLen: ga.aggregateRowLen(cfg.SetSize), Grammar: ga}
		for _, pr := range NewProblems(r, cfg.AggregateRows, exclude) {
			cands := make([][]int32, cfg.SetSize)
			for i := range cands {
				cands[i] = g.demoTrace(r, pr, cfg.Correct, cfg.Again)
			}
			agg.Rows = append(agg.Rows, Row{Prompt: aggregatePrompt(pr, cands), Output: demoAggregation(r, cands, cfg.Check)})
		}
		search.Coef = constant(len(search.Rows), 1/float32(len(search.Rows)))
		agg.Coef = constant(len(agg.Rows), 1/float32(len(agg.Rows)))
		loss, err := p.Step(search, agg)
		if err != nil {
			return fmt.Errorf("warm-up step %d: %w", step, err)
		}
		if log != nil && (step%50 == 0 || step == cfg.Steps-1) {
			fmt.Fprintf(log, "warm-up %3d/%d  cross-entropy %.3f\n", step+1, cfg.Steps, loss)
		}
	}
	return nil
}

func constant(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}
