package spiral

import (
	"errors"
	"fmt"
	"math/big"

	"spiral/combin"
	"spiral/estimator"
	"spiral/lengthgate"
)

// MaxSize bounds the per-problem sizes a [Config] may ask for: the plan's
// K*n indices and the K*N2 aggregation outputs (the search traces N1 are
// bounded by [combin.MaxSize]). It keeps a plan or a credit for one
// problem in memory and every index product inside an int. Real configurations are many
// orders of magnitude smaller.
const MaxSize = 1 << 24

// Family says which group family a [Config] draws its K sets from.
type Family int

const (
	// Subsets, the default (zero value), draws from the C(N1, n) unordered
	// n-subsets of the search traces, as the paper's implementation does.
	// This implicitly assumes the aggregator is insensitive to the order in
	// which it reads the candidates; [Order] decides that order.
	Subsets Family = iota
	// Tuples draws from the (N1)_n = N1!/(N1-n)! ordered n-tuples of
	// distinct traces, the family Proposition 3.1 is proved for. A tuple's
	// order is its presentation order.
	Tuples
)

// String returns "Subsets", "Tuples" or "Family(v)" for an undefined value.
func (f Family) String() string {
	switch f {
	case Subsets:
		return "Subsets"
	case Tuples:
		return "Tuples"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// MarshalText encodes f as "subsets" or "tuples".
func (f Family) MarshalText() ([]byte, error) {
	switch f {
	case Subsets:
		return []byte("subsets"), nil
	case Tuples:
		return []byte("tuples"), nil
	}
	return nil, fmt.Errorf("spiral: Family = %d is neither Subsets nor Tuples", int(f))
}

// UnmarshalText decodes "subsets" or "tuples".
func (f *Family) UnmarshalText(text []byte) error {
	switch string(text) {
	case "subsets":
		*f = Subsets
	case "tuples":
		*f = Tuples
	default:
		return fmt.Errorf("spiral: family %q is neither \"subsets\" nor \"tuples\"", text)
	}
	return nil
}

// Order says in which order the candidates of a set are presented in its
// aggregation prompt, that is the order of the indices in each group of a
// [Plan].
type Order int

const (
	// IndexOrder, the default (zero value), presents each group as drawn:
	// ascending trace index for Subsets, the drawn sequence for Tuples.
	IndexOrder Order = iota
	// Shuffled presents the candidates of each subset in a uniformly random
	// order, drawn from the plan's generator independently for each set. It
	// applies to Subsets only: a tuple is already in a uniformly random
	// order, and reordering it would make it a different tuple (two
	// distinct tuples could become equal).
	Shuffled
)

// String returns "IndexOrder", "Shuffled" or "Order(v)" for an undefined value.
func (o Order) String() string {
	switch o {
	case IndexOrder:
		return "IndexOrder"
	case Shuffled:
		return "Shuffled"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// MarshalText encodes o as "index" or "shuffled".
func (o Order) MarshalText() ([]byte, error) {
	switch o {
	case IndexOrder:
		return []byte("index"), nil
	case Shuffled:
		return []byte("shuffled"), nil
	}
	return nil, fmt.Errorf("spiral: Order = %d is neither IndexOrder nor Shuffled", int(o))
}

// UnmarshalText decodes "index" or "shuffled".
func (o *Order) UnmarshalText(text []byte) error {
	switch string(text) {
	case "index":
		*o = IndexOrder
	case "shuffled":
		*o = Shuffled
	default:
		return fmt.Errorf("spiral: order %q is neither \"index\" nor \"shuffled\"", text)
	}
	return nil
}

// Design says how a [Config] chooses its K sets from the family.
type Design int

const (
	// Uniform, the default (zero value), draws K distinct groups uniformly
	// without replacement from the family, as the paper does. A trace is in
	// no set with probability C(T_avoid, K)/C(T, K) (88/1541, about 5.71%, at
	// the paper's configuration), and the search estimator's multiplier is
	// M = (N1/n) q_K - 1 (1365/1541 there).
	Uniform Design = iota
	// Balanced draws K distinct subsets in which every trace appears
	// r = K*n/N1 times (r or r+1 when N1 does not divide K*n), randomised so
	// that the traces are exchangeable ([combin.BalancedSampler]); at the
	// paper's configuration, two random splits of the 8 traces into halves.
	// Every trace gets credit when K*n >= N1, the multiplier becomes
	// M = min(N1, K*n)/n - 1 (1 at the paper's configuration), and on the
	// toys of package estimator the variance of the M-normalised search
	// update is 15-39% lower, at no cost in aggregation calls. It is not a
	// theorem: estimator's documentation gives a small configuration where it
	// is worse. Balanced requires Subsets, and its unbiasedness, like the
	// uniform design's, requires a presentation order that does not depend
	// on the traces' content.
	Balanced
)

// String returns "Uniform", "Balanced" or "Design(v)" for an undefined value.
func (d Design) String() string {
	switch d {
	case Uniform:
		return "Uniform"
	case Balanced:
		return "Balanced"
	}
	return fmt.Sprintf("Design(%d)", int(d))
}

// MarshalText encodes d as "uniform" or "balanced".
func (d Design) MarshalText() ([]byte, error) {
	switch d {
	case Uniform:
		return []byte("uniform"), nil
	case Balanced:
		return []byte("balanced"), nil
	}
	return nil, fmt.Errorf("spiral: Design = %d is neither Uniform nor Balanced", int(d))
}

// UnmarshalText decodes "uniform" or "balanced".
func (d *Design) UnmarshalText(text []byte) error {
	switch string(text) {
	case "uniform":
		*d = Uniform
	case "balanced":
		*d = Balanced
	default:
		return fmt.Errorf("spiral: design %q is neither \"uniform\" nor \"balanced\"", text)
	}
	return nil
}

// Config is one SPIRAL training step's shape for a single problem x, in the
// paper's symbols: sample N1 search traces, draw K distinct groups of n of
// them from the family, show each group to the aggregator and sample N2
// aggregation outputs for it. That is N1 + K*N2 generations per problem, of
// which the K*N2 aggregation outputs are rewarded.
//
// The zero value is not valid; start from [Paper]. A Config is a plain value:
// methods never modify it, and any number of goroutines may use one Config at
// the same time.
type Config struct {
	// SearchTraces is N1 >= 1, the number of search traces per problem.
	SearchTraces int `json:"search_traces"`
	// SetSize is n, 1 <= n <= N1: the candidates per aggregation prompt.
	SetSize int `json:"set_size"`
	// Sets is K, 1 <= K <= the family size: distinct groups per problem.
	// K = 1 is valid, but a lone set has zero set advantage, so every search
	// advantage is 0 (M = 0 in Proposition 3.1).
	Sets int `json:"sets"`
	// AggregationsPerSet is N2 >= 1, aggregation outputs sampled per set.
	AggregationsPerSet int `json:"aggregations_per_set"`
	// Family is the group family: Subsets (default) or Tuples.
	Family Family `json:"family"`
	// Order is the presentation order inside a group: IndexOrder (default)
	// or Shuffled (Subsets only).
	Order Order `json:"order"`
	// Design is how the K sets are chosen: Uniform (default, the paper's) or
	// Balanced (Subsets only).
	Design Design `json:"design"`
	// Gates are the length gates of Eq. 8 for the search and aggregation
	// advantages; the zero value disables both.
	Gates lengthgate.Gates `json:"gates"`
}

// Paper returns the paper's configuration: N1 = 8 search traces, sets of
// n = 4, K = 4 sets from the 70 unordered subsets, N2 = 4 aggregations per
// set (8 + 16 = 24 generations per problem, 16 of them rewarded), candidates
// in index order, no length gate (the paper gates lengths but does not
// disclose L_target; set Gates to choose one).
func Paper() Config {
	return Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4}
}

// Validate reports every invalid field of c, joined with [errors.Join], each
// naming the field and its value: N1, n, K or N2 out of range (K larger than
// the family included), an undefined Family, Order or Design, Shuffled or
// Balanced with Tuples, a size above [MaxSize], or an invalid gate.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("spiral: Config."+format, args...))
	}
	n1, n, k, n2 := c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet
	if n1 < 1 {
		bad("SearchTraces (N1) = %d < 1", n1)
	} else if n1 > combin.MaxSize {
		bad("SearchTraces (N1) = %d > combin.MaxSize = %d", n1, combin.MaxSize)
	}
	if n < 1 {
		bad("SetSize (n) = %d < 1", n)
	} else if n1 >= 1 && n > n1 {
		bad("SetSize (n) = %d > SearchTraces (N1) = %d", n, n1)
	}
	if k < 1 {
		bad("Sets (K) = %d < 1", k)
	}
	if n2 < 1 {
		bad("AggregationsPerSet (N2) = %d < 1", n2)
	}
	famOK := true
	switch c.Family {
	case Subsets, Tuples:
	default:
		famOK = false
		bad("Family = %d is neither Subsets (%d) nor Tuples (%d)", int(c.Family), int(Subsets), int(Tuples))
	}
	switch c.Order {
	case IndexOrder:
	case Shuffled:
		if c.Family == Tuples {
			bad("Order = Shuffled with Family = Tuples: a tuple's order is its presentation order")
		}
	default:
		bad("Order = %d is neither IndexOrder (%d) nor Shuffled (%d)", int(c.Order), int(IndexOrder), int(Shuffled))
	}
	switch c.Design {
	case Uniform:
	case Balanced:
		if c.Family == Tuples {
			bad("Design = Balanced with Family = Tuples: balanced designs are drawn from subsets (use Order = Shuffled for a random presentation order)")
		}
	default:
		bad("Design = %d is neither Uniform (%d) nor Balanced (%d)", int(c.Design), int(Uniform), int(Balanced))
	}
	if k >= 1 && n >= 1 && k > MaxSize/n {
		bad("Sets (K) = %d: K*n = %d*%d > MaxSize = %d", k, k, n, MaxSize)
	}
	if k >= 1 && n2 >= 1 && k > MaxSize/n2 {
		bad("Sets (K) = %d: K*N2 = %d*%d > MaxSize = %d", k, k, n2, MaxSize)
	}
	if famOK && n1 >= 1 && n1 <= combin.MaxSize && n >= 1 && n <= n1 && k >= 1 {
		fam, err := c.family()
		if err != nil {
			errs = append(errs, err)
		} else if size, fits := fam.Count64(); fits && uint64(k) > size {
			// A family of 2^64 groups or more holds any K <= MaxSize.
			bad("Sets (K) = %d > %s = %d, the number of %s", k, familySymbol(c.Family, n1, n), size, familyNoun(c.Family))
		}
	}
	if err := c.Gates.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("spiral: Config.Gates: %w", err))
	}
	return errors.Join(errs...)
}

// familyNoun names the members of a family in error messages.
func familyNoun(f Family) string {
	if f == Tuples {
		return "ordered n-tuples"
	}
	return "unordered n-subsets"
}

// familySymbol writes a family's size in the paper's notation: C(N1, n) or
// (N1)_n.
func familySymbol(f Family, n1, n int) string {
	if f == Tuples {
		return fmt.Sprintf("(%d)_%d", n1, n)
	}
	return fmt.Sprintf("C(%d, %d)", n1, n)
}

// family returns the combin family of a config whose N1, n and Family are
// valid.
func (c Config) family() (combin.Family, error) {
	if c.Family == Tuples {
		return combin.Tuples(c.SearchTraces, c.SetSize)
	}
	return combin.Subsets(c.SearchTraces, c.SetSize)
}

// validFamily validates c and returns its combin family.
func (c Config) validFamily() (combin.Family, error) {
	if err := c.Validate(); err != nil {
		return combin.Family{}, err
	}
	return c.family()
}

// FamilySize returns the number of groups c draws from: C(N1, n) for Subsets,
// (N1)_n for Tuples, exact. It returns an error if c is not valid.
func (c Config) FamilySize() (*big.Int, error) {
	fam, err := c.validFamily()
	if err != nil {
		return nil, err
	}
	return fam.Count()
}

// M returns the multiplier of Proposition 3.1 for c's design: the expected
// search update sum_y A_search(y) grad log pi(y) equals M times the gradient
// of the set objective E[f(y_1..y_n)], for any presentation order that does
// not depend on the traces' content. For the Uniform design it is
// M = (N1/n) q_K - 1 with q_K = 1 - C(T_avoid, K)/C(T, K) for c's family
// ([estimator.M]); for the Balanced design it is min(N1, K*n)/n - 1
// ([estimator.BalancedM]). K = 1 gives 0. Divide the search advantages by M
// (or scale the search loss by 1/M) for an update that is unbiased for the
// gradient. It returns an error if c is not valid.
func (c Config) M() (*big.Rat, error) {
	fam, err := c.validFamily()
	if err != nil {
		return nil, err
	}
	if c.Design == Balanced {
		return estimator.BalancedM(fam, c.Sets)
	}
	return estimator.M(fam, c.Sets)
}

// PlanSize returns K*n, the number of trace indices in one problem's plan.
func (c Config) PlanSize() int { return c.Sets * c.SetSize }

// AggregationOutputs returns K*N2, the number of aggregation outputs (and
// rewards) per problem.
func (c Config) AggregationOutputs() int { return c.Sets * c.AggregationsPerSet }

// Generations returns N1 + K*N2, the number of outputs generated per problem.
func (c Config) Generations() int { return c.SearchTraces + c.AggregationOutputs() }
