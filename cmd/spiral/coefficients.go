package main

import (
	"errors"
	"flag"
	"fmt"

	"spiral"
	"spiral/loss"
)

// coefficients are credit's -coefficients, -update, -split-roles and
// -missing-rate: the loss coefficients of Config.LossCoefficients for each
// line.
type coefficients struct {
	reduction, update string
	split, given      bool // given: -coefficients was set, even to ""
	missingRate       float64

	on   bool
	opt  spiral.LossOptions
	dst  spiral.LossCoefficients
	rows [][]float64
}

func (k *coefficients) flags(fs *flag.FlagSet) {
	fs.Func("coefficients", "", func(r string) error { k.reduction, k.given = r, true; return nil })
	fs.StringVar(&k.update, "update", "joint", "")
	fs.BoolVar(&k.split, "split-roles", false, "")
	fs.Float64Var(&k.missingRate, "missing-rate", 0, "")
}

// parse checks the flags and sets opt; -update, -split-roles and
// -missing-rate need -coefficients.
func (k *coefficients) parse() error {
	if !k.given {
		if k.update != "joint" || k.split || k.missingRate != 0 {
			return fmt.Errorf("-update, -split-roles and -missing-rate need -coefficients")
		}
		return nil
	}
	k.on = true
	r, err := parseName[loss.Reduction]("-coefficients", k.reduction)
	if err != nil {
		return err
	}
	k.opt.Reduction = r
	switch k.update {
	case "joint":
		k.opt.Update = spiral.JointGradient
	case "paper":
		k.opt.Update = spiral.PaperUpdate
	case "scored":
		k.opt.Update = spiral.ScoredGradient
	default:
		return fmt.Errorf("-update = %q, want joint, paper or scored", k.update)
	}
	k.opt.SplitRoles = k.split
	if _, err := spiral.Paper().ScoredConstants(k.missingRate); err != nil {
		return fmt.Errorf("%s", sizeError(err))
	}
	k.opt.MissingRate = k.missingRate
	return nil
}

// write adds the coefficients of the line's credit b to out, in the shape
// of the line's rewards.
func (k *coefficients) write(out *creditOutput, c spiral.Config, b *spiral.BatchCredit, in spiral.Batch, line *creditLine) error {
	if !k.on {
		return nil
	}
	if line.SearchLengths == nil || line.AggregationLengths == nil {
		return fmt.Errorf("-coefficients needs search_lengths and aggregation_lengths: the loss reads every output's length")
	}
	if err := c.LossCoefficients(&k.dst, b, in, k.opt); err != nil {
		return coefficientsError(err, line)
	}
	k.rows = k.rows[:0]
	o := 0
	for _, rs := range line.Rewards {
		k.rows = append(k.rows, k.dst.Aggregation[o:o+len(rs)])
		o += len(rs)
	}
	out.SearchCoefficients = k.dst.Search
	out.AggregationCoefficients = k.rows
	out.Scale = &k.dst.Report.Scale
	return nil
}

// coefficientsError says what an error of Config.LossCoefficients means in
// the line's fields. The credit has checked the lengths' layout and signs
// and the configuration, so what remains is a length above the loss's
// bound, at its position in the batch's flat lengths: an aggregation
// output's becomes its set's row and its place in it.
func coefficientsError(err error, line *creditLine) error {
	if e, ok := errors.AsType[*spiral.InputError](err); ok && e.Field == spiral.FieldAggregationLengths && e.Output >= 0 {
		c := *e
		for i, rs := range line.Rewards {
			if c.Output < len(rs) {
				c.Set = i
				break
			}
			c.Output -= len(rs)
		}
		return inLine(&c)
	}
	if len(inputErrors(err)) > 0 {
		return configError(err)
	}
	return fmt.Errorf("-coefficients: %w", err)
}
