package spiral

import (
	"encoding/json"
	"strings"
	"testing"

	"spiral/lengthgate"
)

func TestPaperConfig(t *testing.T) {
	c := Paper()
	if err := c.Validate(); err != nil {
		t.Fatalf("Paper().Validate() = %v", err)
	}
	want := Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4}
	if c != want {
		t.Errorf("Paper() = %+v, want %+v", c, want)
	}
	size, err := c.FamilySize()
	if err != nil || size.Int64() != 70 {
		t.Errorf("FamilySize() = %v, %v; want 70 = C(8, 4)", size, err)
	}
	if g, a, p := c.Generations(), c.AggregationOutputs(), c.PlanSize(); g != 24 || a != 16 || p != 16 {
		t.Errorf("Generations, AggregationOutputs, PlanSize = %d, %d, %d; want 24, 16, 16", g, a, p)
	}
	tup := c
	tup.Family = Tuples
	if size, err := tup.FamilySize(); err != nil || size.Int64() != 1680 {
		t.Errorf("Tuples FamilySize() = %v, %v; want 1680 = 8*7*6*5", size, err)
	}
}

func TestConfigValidate(t *testing.T) {
	paper := Paper()
	with := func(f func(*Config)) Config { c := paper; f(&c); return c }
	tests := []struct {
		name string
		c    Config
		want []string // substrings, every one must appear
	}{
		{"zero value", Config{}, []string{"SearchTraces (N1) = 0 < 1", "SetSize (n) = 0 < 1", "Sets (K) = 0 < 1", "AggregationsPerSet (N2) = 0 < 1"}},
		{"n > N1", with(func(c *Config) { c.SetSize = 9 }), []string{"SetSize (n) = 9 > SearchTraces (N1) = 8"}},
		{"K > C(8,4)", with(func(c *Config) { c.Sets = 71 }), []string{"Sets (K) = 71 > C(8, 4) = 70"}},
		{"K > (8)_4", with(func(c *Config) { c.Family = Tuples; c.Sets = 1681 }), []string{"Sets (K) = 1681 > (8)_4 = 1680"}},
		{"negative N2", with(func(c *Config) { c.AggregationsPerSet = -2 }), []string{"AggregationsPerSet (N2) = -2 < 1"}},
		{"bad family", with(func(c *Config) { c.Family = 7 }), []string{"Family = 7"}},
		{"bad order", with(func(c *Config) { c.Order = 5 }), []string{"Order = 5"}},
		{"shuffled tuples", with(func(c *Config) { c.Family = Tuples; c.Order = Shuffled }), []string{"Order = Shuffled with Family = Tuples"}},
		{"bad gate", with(func(c *Config) { c.Gates.Aggregation.Target = -1 }), []string{"Gates", "aggregation gate", "Target = -1"}},
		{"too large", with(func(c *Config) { c.SearchTraces = 1 << 30 }), []string{"SearchTraces (N1) = 1073741824 > combin.MaxSize"}},
		{"K*N2 too large", Config{SearchTraces: 1 << 10, SetSize: 2, Sets: 1 << 12, AggregationsPerSet: 1 << 13}, []string{"K*N2 = 4096*8192 > MaxSize"}},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		if err == nil {
			t.Errorf("%s: Validate() = nil, want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %q, want it to contain %q", tt.name, err, w)
			}
		}
	}
	good := []Config{
		paper,
		with(func(c *Config) { c.Sets = 70 }),
		with(func(c *Config) { c.Sets = 1 }),
		with(func(c *Config) { c.Family = Tuples; c.Sets = 1680 }),
		with(func(c *Config) { c.Order = Shuffled }),
		with(func(c *Config) { c.Gates = lengthgate.Shared(lengthgate.Gate{Target: 4096}) }),
		{SearchTraces: 1, SetSize: 1, Sets: 1, AggregationsPerSet: 1},
	}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v, want nil", c, err)
		}
	}
}

func TestConfigJSON(t *testing.T) {
	c := Paper()
	c.Family = Subsets
	c.Order = Shuffled
	c.Gates.Search = lengthgate.Gate{Target: 3000, Boundary: lengthgate.KeepAtTarget}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"family":"subsets"`) || !strings.Contains(string(data), `"order":"shuffled"`) {
		t.Errorf("json.Marshal = %s, want family and order as names", data)
	}
	var back Config
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back != c {
		t.Errorf("round trip: %+v, want %+v", back, c)
	}
	for _, bad := range []string{`{"family":"sets"}`, `{"order":"random"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("json.Unmarshal(%s) = nil error", bad)
		}
	}
	if _, err := json.Marshal(Config{Family: 9}); err == nil {
		t.Error("json.Marshal of Family 9: nil error")
	}
}
