package spiral

import (
	"errors"
	"fmt"
	"math/big"

	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/gating"
	"spiral/internal/inputerr"
	"spiral/lengthgate"
)

// Config is one SPIRAL training step's shape for a single problem, in the
// paper's symbols: sample N1 search traces, draw K distinct sets of n of
// them, show each set to the aggregator and sample N2 aggregation outputs
// for it. That is N1 + K*N2 generations per problem, of which the K*N2
// aggregation outputs are rewarded.
//
// The zero value is not valid; start from [Paper]. A Config is a plain
// value: methods never modify it (nor what its pointer fields point to), and
// any number of goroutines may use one Config at the same time.
type Config struct {
	// SearchTraces is N1, 1 <= N1 <= combin.MaxSize: search traces per
	// problem.
	SearchTraces int `json:"search_traces"`
	// SetSize is n, 1 <= n <= N1: the candidates per aggregation prompt.
	SetSize int `json:"set_size"`
	// Sets is K, 1 <= K <= the family size: distinct sets per problem.
	// K = 1 is valid, but a lone set has zero set advantage, so every
	// search advantage is 0 (M = 0).
	Sets int `json:"sets"`
	// AggregationsPerSet is N2 >= 1: aggregation outputs sampled per set.
	AggregationsPerSet int `json:"aggregations_per_set"`
	// Ordered draws the sets from the (N1)_n ordered n-tuples of distinct
	// traces, the family Proposition 3.1 is proved for, instead of the
	// C(N1, n) unordered n-subsets (false, the default and the paper's
	// implementation). A tuple's order is its presentation order.
	Ordered bool `json:"ordered"`
	// Order is the presentation order inside a set: combin.IndexOrder (the
	// default: ascending trace index, or a tuple's own order) or
	// combin.Shuffled (a uniformly random order per set; subsets only).
	Order combin.Order `json:"order"`
	// Design is how the K sets are drawn: combin.Uniform (the default and
	// the paper's: uniformly without replacement) or combin.Balanced (every
	// trace in floor(K n/N1) or that plus one sets; subsets only).
	Design combin.Design `json:"design"`
	// Gates are the length gates of Eq. 8 on the search and aggregation
	// advantages; the zero value disables both.
	Gates lengthgate.Gates `json:"gates"`
	// Overlong, when not nil, is DAPO's soft overlong punishment, added to
	// each aggregation reward before the baselines (see [Config.CreditBatch]
	// for the order of passes). It needs the aggregation lengths.
	Overlong *lengthgate.SoftOverlong `json:"overlong,omitempty"`
	// RewardRange, when enabled, is the dynamic-sampling filter of
	// OpenRLHF: a problem whose mean raw reward lies outside
	// (Low, High) is dropped. The zero value keeps every problem.
	RewardRange advantage.RewardRange `json:"reward_range"`
	// AggregationBaseline is the baseline of the aggregation advantage:
	// WithinSet (the zero value and the paper's: r - f, f the mean of the
	// set's scored rewards, the output's own included) or LeaveOneOut
	// (r minus the mean of the set's other scored rewards,
	// S/(S-1) (r - f) for S scored outputs; needs N2 >= 2).
	// [Config.RoleWeights] and [Config.LossCoefficients] follow it.
	AggregationBaseline AggregationBaseline `json:"aggregation_baseline"`
}

// Paper returns the paper's configuration: N1 = 8 search traces, sets of
// n = 4, K = 4 sets drawn uniformly from the 70 unordered subsets, N2 = 4
// aggregations per set (8 + 16 = 24 generations per problem, 16 of them
// rewarded), candidates in index order, no length gate (the paper gates
// lengths but does not disclose L_target; set Gates to choose one).
func Paper() Config {
	return Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4}
}

// Validate reports every invalid field of c, joined with [errors.Join], each
// an *[InputError] whose Field is the Config field ("Config.SetSize",
// "Config.Gates.Search.Target", ...), whose Value is its value and whose
// reason is in the paper's symbols: N1, n, K or N2 out of range (K larger than
// the family included), an undefined Order or Design, Shuffled or Balanced
// with Ordered, K*n or K*N2 above combin.MaxSize, or an invalid gate,
// overlong punishment or reward range.
func (c Config) Validate() error {
	if err := c.validateShape(); err != nil {
		return err
	}
	_, err := c.family()
	return err
}

// validateShape is Validate without the comparison of K with the family
// size, which only planning needs: on a valid c it does not allocate. It
// takes c by pointer, as CreditBatch's other passes do: a copy of the
// Config for each call cost about 35 instructions a step.
func (c *Config) validateShape() error {
	n1, n, k, n2 := c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet
	var errs []error
	bad := func(field string, value float64, format string, args ...any) {
		errs = append(errs, configError(field, value, symbolic(format, args...)))
	}
	if n1 < 1 {
		bad("SearchTraces", float64(n1), "%d < 1", n1)
	} else if n1 > combin.MaxSize {
		bad("SearchTraces", float64(n1), "%d > %d, the most traces a family holds", n1, combin.MaxSize)
	}
	if n < 1 {
		bad("SetSize", float64(n), "%d < 1", n)
	} else if n1 >= 1 && n > n1 {
		bad("SetSize", float64(n), "%d > N1 = %d", n, n1)
	}
	if k < 1 {
		bad("Sets", float64(k), "%d < 1", k)
	}
	if n2 < 1 {
		bad("AggregationsPerSet", float64(n2), "%d < 1", n2)
	}
	if k >= 1 && n >= 1 && k > combin.MaxSize/n {
		bad("Sets", float64(k), "K*n = %d*%d > %d, the most members a problem's plan holds", k, n, combin.MaxSize)
	}
	if k >= 1 && n2 >= 1 && k > combin.MaxSize/n2 {
		bad("Sets", float64(k), "K*N2 = %d*%d > %d, the most aggregation outputs a problem holds", k, n2, combin.MaxSize)
	}
	switch c.Order {
	case combin.IndexOrder:
	case combin.Shuffled:
		if c.Ordered {
			bad("Order", float64(c.Order), "shuffled tuples: a tuple's order is its presentation order")
		}
	default:
		bad("Order", float64(c.Order), "%d is not a defined Order", int(c.Order))
	}
	switch c.Design {
	case combin.Uniform:
	case combin.Balanced:
		if c.Ordered {
			bad("Design", float64(c.Design), "balanced tuples: balanced designs are drawn from subsets (shuffle subsets for a random presentation order)")
		}
	default:
		bad("Design", float64(c.Design), "%d is not a defined Design", int(c.Design))
	}
	if err := c.Gates.Validate(); err != nil {
		errs = append(errs, subConfigError("Gates", err))
	}
	if c.Overlong != nil {
		if err := c.Overlong.Validate(); err != nil {
			errs = append(errs, subConfigError("Overlong", err))
		}
	}
	switch c.AggregationBaseline {
	case WithinSet:
	case LeaveOneOut:
		if n2 < 2 {
			bad("AggregationBaseline", float64(c.AggregationBaseline), "LeaveOneOut needs N2 >= 2, have N2 = %d", n2)
		}
	default:
		bad("AggregationBaseline", float64(c.AggregationBaseline), "%d is not a defined AggregationBaseline", int(c.AggregationBaseline))
	}
	if err := c.RewardRange.Validate(); err != nil {
		errs = append(errs, subConfigError("RewardRange", err))
	}
	if errs == nil {
		return nil // without errors.Join's call: about 10 instructions a step
	}
	return errors.Join(errs...)
}

// validConfig remembers the last Config that validateShape accepted for a
// BatchCredit, with the value its Overlong points to, so that CreditBatch
// called again with the same Config, as a trainer calls it every step,
// skips the checks: the comparison costs about 85 instructions where the
// checks cost about 190, which takes the one-problem step from 5,730 to
// 5,621 (bench/cachegrind.sh). TestRememberedConfig pins the errors and
// the credit to those of a fresh BatchCredit. The zero value remembers
// nothing (a remembered Config has N1 >= 1).
type validConfig struct {
	c           Config
	overlong    lengthgate.SoftOverlong // *c.Overlong, when not nil
	search, agg gating.Gate             // c's gates in the form of the gates' loop
}

// validate returns c.validateShape(), without its checks when c is the
// remembered Config; it remembers a valid c.
func (v *validConfig) validate(c *Config) error {
	if v.same(c) {
		return nil
	}
	if err := c.validateShape(); err != nil {
		return err
	}
	v.c = *c
	if c.Overlong != nil {
		v.overlong = *c.Overlong
	}
	v.search, v.agg = gateBounds(c.Gates.Search), gateBounds(c.Gates.Aggregation)
	return nil
}

// same reports whether c is the remembered Config: every field equal, and
// Overlong nil in both or pointing to equal values. It compares field by
// field: Go's == on two Configs calls memequal, which costs about as much
// as the checks it would skip. TestValidConfigSeesEveryField fails when a
// field of Config is missing here.
func (v *validConfig) same(c *Config) bool {
	r := &v.c
	return r.SearchTraces >= 1 &&
		r.SearchTraces == c.SearchTraces && r.SetSize == c.SetSize && r.Sets == c.Sets &&
		r.AggregationsPerSet == c.AggregationsPerSet && r.Ordered == c.Ordered &&
		r.Order == c.Order && r.Design == c.Design && r.Gates == c.Gates &&
		r.RewardRange == c.RewardRange && r.AggregationBaseline == c.AggregationBaseline &&
		(r.Overlong == nil) == (c.Overlong == nil) && (c.Overlong == nil || *c.Overlong == v.overlong)
}

// gateBounds returns g in the form of the gates' loop.
func gateBounds(g lengthgate.Gate) gating.Gate {
	return gating.Bounds(g.Target, g.Boundary == lengthgate.KeepAtTarget)
}

// family returns the combin family of a c whose shape is valid, or an error
// if K exceeds the family size.
func (c Config) family() (combin.Family, error) {
	fam, err := combin.NewFamily(c.SearchTraces, c.SetSize, c.Ordered)
	if err != nil {
		panic(fmt.Sprintf("spiral: family of a valid shape: %v", err)) // unreachable: validateShape checked N1 and n
	}
	// A family of 2^64 sets or more holds any K <= combin.MaxSize.
	if size, fits := fam.Count64(); fits && uint64(c.Sets) > size {
		symbol, noun := fmt.Sprintf("C(%d, %d)", c.SearchTraces, c.SetSize), "unordered n-subsets"
		if c.Ordered {
			symbol, noun = fmt.Sprintf("(%d)_%d", c.SearchTraces, c.SetSize), "ordered n-tuples"
		}
		return combin.Family{}, configError("Sets", float64(c.Sets), symbolic("%d > %s = %d, the number of %s", c.Sets, symbol, size, noun))
	}
	return fam, nil
}

// validFamily validates c and returns its combin family.
func (c Config) validFamily() (combin.Family, error) {
	if err := c.validateShape(); err != nil {
		return combin.Family{}, err
	}
	return c.family()
}

// PlanSize returns K*n, the number of trace indices in one problem's plan.
func (c Config) PlanSize() int { return c.Sets * c.SetSize }

// AggregationOutputs returns K*N2, the number of aggregation outputs (and
// rewards) per problem.
func (c Config) AggregationOutputs() int { return c.Sets * c.AggregationsPerSet }

// Generations returns N1 + K*N2, the number of outputs generated per problem.
func (c Config) Generations() int { return c.SearchTraces + c.AggregationOutputs() }

// Constants returns the constants of c's family and design side by side:
// the probability that a given trace is in no set, q_K = 1 - that, and the
// multiplier M of Proposition 3.1 (docs/findings.md#the-constant-m), exactly
// and as floats, as [combin.Family.Constants] computes them. The exact
// fields are nil when an exact answer would cost more than combin documents;
// the floats are always set. It returns an error if c is not valid.
func (c Config) Constants() (combin.Constants, error) {
	fam, err := c.validFamily()
	if err != nil {
		return combin.Constants{}, err
	}
	return fam.Constants(c.Design, c.Sets)
}

// M returns the multiplier of Proposition 3.1 for c's family and design:
// the expected search update sum_y A_search(y) grad log pi(y) equals M times
// the gradient of the set objective E[f(y_1..y_n)], for any presentation
// order that does not depend on the traces' content. Uniform design:
// M = (N1/n) q_K - 1; Balanced: M = min(N1, K n)/n - 1. K = 1 gives 0. At
// the paper's configuration M = 1365/1541 (uniform) or 1 (balanced).
//
// It returns an error if c is not valid, and an *[InputError] about
// Config.Sets wrapping [ErrTooCostly] if the exact value is beyond
// combin's cost bound (see [Config.Constants]); [Config.MFloat] answers
// then.
func (c Config) M() (*big.Rat, error) {
	k, err := c.Constants()
	if err != nil {
		return nil, err
	}
	if k.M == nil {
		return nil, configError("Sets", float64(c.Sets), inputerr.TooCostly(fmt.Sprintf("the exact M of %s K = %d is beyond combin's cost bound; MFloat gives it as a float", c.familyString(), c.Sets)))
	}
	return k.M, nil
}

// MFloat returns M (see [Config.M]) as a float64, for every valid c, with
// the error combin documents for [combin.Constants].MFloat. It returns an
// error if c is not valid.
func (c Config) MFloat() (float64, error) {
	k, err := c.Constants()
	if err != nil {
		return 0, err
	}
	return k.MFloat, nil
}

func (c Config) familyString() string {
	if c.Ordered {
		return fmt.Sprintf("(%d)_%d %s", c.SearchTraces, c.SetSize, c.Design)
	}
	return fmt.Sprintf("C(%d, %d) %s", c.SearchTraces, c.SetSize, c.Design)
}

// configError returns the *InputError about Config field field.
func configError(field string, value float64, reason error) error {
	f := "Config." + field
	return (&InputError{Field: f, Problem: -1, Set: -1, Output: -1, Value: value, Err: reason}).In("spiral", f)
}

// subConfigError returns the *InputError about the invalid Config field
// field (Gates, Overlong or RewardRange), whose Validate returned err: an
// *InputError naming the field within it, renamed to "Config.<field>.<its
// field>".
func subConfigError(field string, err error) error {
	if ie, ok := errors.AsType[*InputError](err); ok {
		f := "Config." + field + "." + ie.Field
		return ie.In("spiral", f)
	}
	return configError(field, 0, err)
}

// symbolic returns an error whose text may start with a symbol of the
// paper (K*n), which keeps its case.
func symbolic(format string, args ...any) error { return fmt.Errorf(format, args...) }
