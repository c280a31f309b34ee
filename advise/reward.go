package advise

import (
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"spiral/estimator"
	"spiral/internal/inputerr"
)

// RewardModel is the toy problem Advise ranks configurations on: a search
// trace is correct with probability Correct, independently; an aggregation
// output is correct with probability Found when the number c of correct
// traces among the n candidates it reads satisfies Rule, and with
// probability Missed otherwise. Its set objective is
//
//	f(G) = Missed + (Found - Missed) [c(G) >= m(n)],
//
// with m(n) the least count Rule accepts (Needed), a symmetric objective, so
// the set-sampling term has its closed form. The aggregator is binary (an
// output is correct or not, reward 1 if correct) with its own parameters
// per presented context, as for DecomposeAggregation. The zero Rule and
// Needs are "find one", m(n) = 1.
type RewardModel struct {
	Correct *big.Rat `json:"correct"`
	Found   *big.Rat `json:"found"`
	Missed  *big.Rat `json:"missed"`
	// Rule is how Found depends on c; Needs is the m of NeedsPieces, in
	// [1, N1 - 1] for the largest N1 explored, and 0 under the other rules.
	Rule  Rule `json:"rule,omitempty"`
	Needs int  `json:"needs,omitempty"`
}

// Rule is how an aggregation output's chance of being correct depends on the
// number c of correct candidates among the n it reads.
type Rule int

const (
	// FindOne is Found when c >= 1: one correct candidate suffices.
	FindOne Rule = iota
	// NeedsPieces is Found when c >= m = RewardModel.Needs: the answer
	// needs m pieces, each in a different correct candidate. m = 1 is
	// FindOne, m = n asks every candidate to be correct, and set sizes
	// n < m, where f is the constant Missed and carries no signal, are
	// not explored.
	NeedsPieces
	// Majority is Found when 2c > n, that is c >= floor(n/2) + 1: more
	// than half of the candidates are correct. At even n a tie, c = n/2,
	// is Missed; at n = 2 both candidates must be correct.
	Majority
)

var ruleNames = []string{"find-one", "needs", "majority"}

// String returns "find-one", "needs" or "majority".
func (r Rule) String() string {
	if r < 0 || int(r) >= len(ruleNames) {
		return fmt.Sprintf("Rule(%d)", int(r))
	}
	return ruleNames[r]
}

// MarshalText returns r.String(); it fails for an undefined value.
func (r Rule) MarshalText() ([]byte, error) {
	if r < 0 || int(r) >= len(ruleNames) {
		return nil, inputerr.Undefined("advise", FieldRule, int(r), "Rule")
	}
	return []byte(r.String()), nil
}

// UnmarshalText parses the names String returns.
func (r *Rule) UnmarshalText(b []byte) error {
	if i := slices.Index(ruleNames, string(b)); i >= 0 {
		*r = Rule(i)
		return nil
	}
	return inputerr.Name("advise", FieldRule, b, ruleNames...)
}

// Needed returns m(n), the least number of correct candidates among n >= 1
// for which an output is correct with probability Found: 1 for FindOne,
// Needs for NeedsPieces, floor(n/2) + 1 for Majority. It returns an error
// if n < 1, the rule is undefined, or Needs is not in [1, n] under
// NeedsPieces (not 0 under the other rules).
func (r RewardModel) Needed(n int) (int, error) {
	if n < 1 {
		return 0, argError(FieldSetSize, -1, n, "%d < 1", n)
	}
	if r.Rule != NeedsPieces && r.Needs != 0 {
		return 0, argError(FieldNeeds, -1, r.Needs, "%d under rule %v, want 0 (needs applies to rule needs)", r.Needs, r.Rule)
	}
	switch r.Rule {
	case FindOne:
		return 1, nil
	case NeedsPieces:
		if r.Needs < 1 || r.Needs > n {
			return 0, argError(FieldNeeds, -1, r.Needs, "%d outside [1, n = %d]", r.Needs, n)
		}
		return r.Needs, nil
	case Majority:
		return n/2 + 1, nil
	}
	return 0, inputerr.Undefined("advise", FieldRule, int(r.Rule), "Rule")
}

// policy returns the search policy of the reward model's toy problem over
// {correct = 0, wrong = 1}: Correct and 1 - Correct.
func (r RewardModel) policy() (*estimator.Categorical, error) {
	c, err := estimator.NewCategorical([]*big.Rat{r.Correct, new(big.Rat).Sub(big.NewRat(1, 1), r.Correct)})
	if err != nil {
		return nil, fmt.Errorf("advise: reward.correct: %w", err)
	}
	return c, nil
}

// setObjective returns the reward model's set objective f over {correct =
// 0, wrong = 1}^n (at most MaxTraces - 1 symbols, so 2^n entries).
func setObjective(n int, r RewardModel) (*estimator.Table, error) {
	m, err := r.Needed(n)
	if err != nil {
		return nil, err
	}
	size := 1 << n
	values := make([]*big.Rat, size)
	for idx := range size {
		// A set bit is a wrong candidate.
		if n-bits.OnesCount(uint(idx)) >= m {
			values[idx] = r.Found
		} else {
			values[idx] = r.Missed
		}
	}
	return estimator.NewTable(2, n, values)
}
