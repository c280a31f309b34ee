package advise

import (
	"cmp"
	"slices"
)

// Frontier returns the candidates of r on the frontier of signal per token
// against tokens: c is on it when no other candidate d has d.Tokens <=
// c.Tokens and d.SNRPerToken > c.SNRPerToken. Candidates of equal Tokens and
// equal SNRPerToken are all kept. They come by Tokens ascending (ties in
// r's order), and SNRPerToken never falls along them, so for a cap of B
// tokens per problem the last one with Tokens <= B is the best candidate
// within B. The frontier of no candidates is empty.
func (r Result) Frontier() []Candidate {
	byTokens := slices.Clone(r.Candidates)
	slices.SortStableFunc(byTokens, func(a, b Candidate) int { return cmp.Compare(a.Tokens, b.Tokens) })
	var out []Candidate
	best := 0.0 // the best SNRPerToken at fewer tokens
	for i := 0; i < len(byTokens); {
		j := i
		top := byTokens[i].SNRPerToken
		for ; j < len(byTokens) && byTokens[j].Tokens == byTokens[i].Tokens; j++ {
			top = max(top, byTokens[j].SNRPerToken)
		}
		if i == 0 || top >= best {
			for _, c := range byTokens[i:j] {
				if c.SNRPerToken == top {
					out = append(out, c)
				}
			}
			best = top
		}
		i = j
	}
	return out
}
