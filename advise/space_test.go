package advise

import (
	"math/big"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"spiral/budget"
	"spiral/combin"
	"spiral/internal/spiraltest"
)

// refusedInDocs reads the configurations docs/findings.md lists as refused
// (N1/n/K of each design, "N1/n/K1–K2" for a range of K) and the words its
// reason gives.
func refusedInDocs(t *testing.T) (map[Refusal]bool, map[combin.Design]string) {
	t.Helper()
	doc, err := os.ReadFile("../docs/findings.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(doc), "<!-- refused -->\n")
	if !ok {
		t.Fatal("docs/findings.md has no <!-- refused --> list")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	refused := map[Refusal]bool{}
	reasons := map[combin.Design]string{}
	item := regexp.MustCompile(`(\d)/(\d)/(\d)(?:[–-](\d))?`)
	for line := range strings.Lines(list) {
		var design combin.Design
		switch {
		case strings.HasPrefix(line, "- balanced"):
			design, reasons[combin.Balanced] = combin.Balanced, "round sequences"
		case strings.HasPrefix(line, "- uniform"):
			design, reasons[combin.Uniform] = combin.Uniform, "selections"
		default:
			t.Fatalf("docs/findings.md: refused list line %q", line)
		}
		_, items, _ := strings.Cut(line, ": ")
		for _, m := range item.FindAllStringSubmatch(items, -1) {
			N1, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			lo, _ := strconv.Atoi(m[3])
			hi := lo
			if m[4] != "" {
				hi, _ = strconv.Atoi(m[4])
			}
			for K := lo; K <= hi; K++ {
				refused[Refusal{SearchTraces: N1, SetSize: n, Sets: K, Design: design}] = true
			}
		}
	}
	return refused, reasons
}

// The ranked space is the stated one, 3 <= N1 <= MaxTraces, 2 <= n < N1,
// 2 <= K <= min(C(N1, n), MaxSets), 2 <= N2 <= MaxAggregations, both
// designs, less exactly what docs/findings.md lists as refused, each
// refusal with the reason the doc gives, and Evaluate refuses exactly
// those. The default run checks N1 <= 6 and N2 <= 3; the long run (about
// 20 seconds) the whole space with every N2.
func TestAdviseWholeSpace(t *testing.T) {
	docRefused, reasons := refusedInDocs(t)
	req := Request{Budget: 1 << 40, Lengths: budget.Limits{Search: 1, Aggregation: 1},
		Reward: RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)}}
	maxN1, maxN2 := MaxTraces, MaxAggregations
	if !spiraltest.Long() {
		maxN1, maxN2 = 6, 3
		req.MaxTraces, req.MaxAggregations = maxN1, maxN2
	}
	res, err := Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	ranked := map[[5]int]bool{}
	for _, c := range res.Candidates {
		g := c.Config
		ranked[[5]int{g.SearchTraces, g.SetSize, g.Sets, g.AggregationsPerSet, int(g.Design)}] = true
	}
	refused := map[Refusal]bool{}
	for _, r := range res.Refused {
		if want := reasons[r.Design]; want == "" || !strings.Contains(r.Reason, want) {
			t.Errorf("%d/%d/%d %v refused for %q; the doc's reason is about %q", r.SearchTraces, r.SetSize, r.Sets, r.Design, r.Reason, want)
		}
		r.Reason = ""
		refused[r] = true
	}
	stated, want := 0, 0
	for N1 := 3; N1 <= maxN1; N1++ {
		for n := 2; n < N1; n++ {
			f, _ := combin.Subsets(N1, n)
			T, _ := f.Count64()
			for K := 2; K <= MaxSets && uint64(K) <= T; K++ {
				for _, design := range []combin.Design{combin.Uniform, combin.Balanced} {
					key := Refusal{SearchTraces: N1, SetSize: n, Sets: K, Design: design}
					if refused[key] != docRefused[key] {
						t.Errorf("%d/%d/%d %v: refused %v, listed as refused in docs/findings.md %v", N1, n, K, design, refused[key], docRefused[key])
					}
					if cfg := req.config(N1, n, K, 2, design); N1 <= 6 || docRefused[key] {
						if _, err := Evaluate(cfg, req); (err != nil) != docRefused[key] {
							t.Errorf("%d/%d/%d %v: Evaluate's error %v, listed as refused %v", N1, n, K, design, err, docRefused[key])
						}
					}
					for N2 := 2; N2 <= maxN2; N2++ {
						stated++
						if docRefused[key] {
							continue
						}
						want++
						if !ranked[[5]int{N1, n, K, N2, int(design)}] {
							t.Errorf("%d/%d/%d/%d %v not ranked", N1, n, K, N2, design)
						}
					}
				}
			}
		}
	}
	if len(res.Candidates) != want {
		t.Errorf("%d candidates, want %d of the stated %d", len(res.Candidates), want, stated)
	}
	t.Logf("%d configurations stated, %d ranked, %d (N1, n, K, design) refused", stated, len(res.Candidates), len(res.Refused))
}
