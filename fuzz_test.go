package spiral

import (
	"errors"
	"slices"
	"testing"

	"spiral/combin"
)

// FuzzCheckPlan holds Config.CheckPlan to its contract on arbitrary plans:
// it never panics; it accepts a plan exactly when a plain reading of the
// rules accepts it (K sets of n indices in [0, N1), none repeated in a set,
// no two sets identical as sets, or as sequences when Ordered; for the
// Balanced design every trace in r or r+1 sets); and a rejected set error
// is a *combin.SetError.
func FuzzCheckPlan(f *testing.F) {
	f.Add(uint8(8), uint8(4), uint8(4), uint8(0), []byte{0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 1, 3, 5, 7})
	f.Add(uint8(8), uint8(4), uint8(4), uint8(0), []byte{0, 1, 2, 3, 3, 2, 1, 0, 0, 2, 4, 6, 1, 3, 5, 7})
	f.Add(uint8(8), uint8(4), uint8(4), uint8(1), []byte{0, 1, 2, 3, 3, 2, 1, 0, 0, 2, 4, 6, 1, 3, 5, 7})
	f.Add(uint8(8), uint8(4), uint8(4), uint8(2), []byte{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 4, 3, 5, 6, 7})
	f.Add(uint8(4), uint8(2), uint8(3), uint8(0), []byte{0, 1, 1, 1, 2, 9})
	f.Fuzz(func(t *testing.T, n1, n, k, mode uint8, data []byte) {
		c := Config{SearchTraces: int(n1%10) + 1, SetSize: int(n%5) + 1, Sets: int(k%6) + 1, AggregationsPerSet: 1}
		switch mode % 3 {
		case 1:
			c.Ordered = true
		case 2:
			c.Design = combin.Balanced
		}
		if c.Validate() != nil {
			return
		}
		var p Plan
		for len(data) > 0 && len(p.Sets) < 8 {
			size := c.SetSize
			if data[0] == 255 { // now and then a set of the wrong size
				size = c.SetSize + 1
				data = data[1:]
			}
			set := make([]int, 0, size)
			for range size {
				if len(data) == 0 {
					break
				}
				set = append(set, int(data[0]%16)-2)
				data = data[1:]
			}
			p.Sets = append(p.Sets, set)
		}
		err := c.CheckPlan(p)
		want := plainPlanOK(c, p)
		if (err == nil) != want {
			t.Fatalf("CheckPlan(%+v, %v) = %v, plain reading says ok = %v", c, p.Sets, err, want)
		}
	})
}

// plainPlanOK is the fuzz test's oracle: the rules of CheckPlan read
// literally, pairwise and without any cleverness.
func plainPlanOK(c Config, p Plan) bool {
	if len(p.Sets) != c.Sets {
		return false
	}
	for _, s := range p.Sets {
		if len(s) != c.SetSize {
			return false
		}
		for j, y := range s {
			if y < 0 || y >= c.SearchTraces || slices.Contains(s[:j], y) {
				return false
			}
		}
	}
	key := func(s []int) []int {
		s = slices.Clone(s)
		if !c.Ordered {
			slices.Sort(s)
		}
		return s
	}
	for i := range p.Sets {
		for j := range i {
			if slices.Equal(key(p.Sets[i]), key(p.Sets[j])) {
				return false
			}
		}
	}
	if c.Design == combin.Balanced {
		count := make([]int, c.SearchTraces)
		for _, s := range p.Sets {
			for _, y := range s {
				count[y]++
			}
		}
		r := c.Sets * c.SetSize / c.SearchTraces
		for _, m := range count {
			if m != r && m != r+1 {
				return false
			}
		}
	}
	return true
}

func TestCheckPlanSetError(t *testing.T) {
	c := Paper()
	err := c.CheckPlan(Plan{Sets: [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {0, 2, 4, 6}, {1, 3, 5, 7}}})
	var se *combin.SetError
	if !errors.As(err, &se) {
		t.Fatalf("CheckPlan with two identical sets: %v, want a *combin.SetError", err)
	}
}
