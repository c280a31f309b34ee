package advise

import (
	"cmp"
	"slices"
)

// Frontier returns the candidates of r on the frontier of expected
// improvement per token against tokens per problem: c is on it when no
// other candidate d has d.Tokens <= c.Tokens and d.ImprovementPerToken >
// c.ImprovementPerToken. Candidates of equal Tokens and equal
// ImprovementPerToken are all kept. They come by Tokens ascending (ties in
// r's order), and ImprovementPerToken never falls along them, so for a cap
// of B tokens per problem the last one with Tokens <= B is the best
// candidate within B at the request's step budget. Under a deployment
// objective (Request.DeploySetSize) the frontier is of
// DeployImprovementPerToken instead. The frontier of no candidates is
// empty.
func (r Result) Frontier() []Candidate {
	byTokens := slices.Clone(r.Candidates)
	slices.SortStableFunc(byTokens, func(a, b Candidate) int { return cmp.Compare(a.Tokens, b.Tokens) })
	var out []Candidate
	var best Candidate // the best at fewer tokens
	for i := 0; i < len(byTokens); {
		j := i
		top := byTokens[i]
		for ; j < len(byTokens) && byTokens[j].Tokens == byTokens[i].Tokens; j++ {
			if byTokens[j].rank().Cmp(top.rank()) > 0 {
				top = byTokens[j]
			}
		}
		if i == 0 || top.rank().Cmp(best.rank()) >= 0 {
			for _, c := range byTokens[i:j] {
				if c.rank().Cmp(top.rank()) == 0 {
					out = append(out, c)
				}
			}
			best = top
		}
		i = j
	}
	return out
}
