package main

import (
	"flag"
	"fmt"
	"strings"

	"spiral"
)

// coefficients are credit's -coefficients, -update and -split-roles: the
// loss coefficients of Config.LossCoefficients for each line.
type coefficients struct {
	reduction, update string
	split             bool

	on   bool
	opt  spiral.LossOptions
	dst  spiral.LossCoefficients
	rows [][]float64
}

func (k *coefficients) flags(fs *flag.FlagSet) {
	fs.StringVar(&k.reduction, "coefficients", "", "")
	fs.StringVar(&k.update, "update", "joint", "")
	fs.BoolVar(&k.split, "split-roles", false, "")
}

// parse checks the flags and sets opt; -update and -split-roles need
// -coefficients.
func (k *coefficients) parse() error {
	if k.reduction == "" {
		if k.update != "joint" || k.split {
			return fmt.Errorf("-update and -split-roles need -coefficients")
		}
		return nil
	}
	k.on = true
	if err := k.opt.Reduction.UnmarshalText([]byte(k.reduction)); err != nil {
		return fmt.Errorf("-coefficients: %s", strings.TrimPrefix(err.Error(), "loss: "))
	}
	switch k.update {
	case "joint":
		k.opt.Update = spiral.JointGradient
	case "paper":
		k.opt.Update = spiral.PaperUpdate
	default:
		return fmt.Errorf("-update = %q, want joint or paper", k.update)
	}
	k.opt.SplitRoles = k.split
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
		// The lengths were checked by the credit; what remains is the
		// configuration's (N2 = 1 with a baseline that needs two).
		return fmt.Errorf("-coefficients: %s", strings.TrimPrefix(err.Error(), "spiral: "))
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
