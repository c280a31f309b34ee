package spiral

import (
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	"spiral/advantage"
	"spiral/combin"
	"spiral/lengthgate"
	"spiral/loss"
)

// TestEntryErrorsAreInputErrors: the errors of the text codecs (Marshal and
// UnmarshalText), of combin's exact answers beyond their cost bound, of
// Rank and Unrank's arguments, of the zero Family and of advantage's
// conversions are *InputError values naming the argument or field, the
// cost bound's reason ErrTooCostly at every layer.
func TestEntryErrorsAreInputErrors(t *testing.T) {
	sub := func(N1, n int) combin.Family {
		f, err := combin.Subsets(N1, n)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	second := func(_ any, err error) error { return err }
	var design combin.Design
	var order combin.Order
	var red loss.Reduction
	var bound lengthgate.Boundary
	var preset advantage.Preset
	var scale advantage.Scale
	var whiten advantage.Whitening
	huge := sub(1<<20, 1<<19)
	for _, tc := range []struct {
		name, field, text string
		err               error
		costly            bool
	}{
		{"Design.UnmarshalText", combin.FieldDesign, `combin: Design: "even" is not one of "uniform", "balanced"`,
			design.UnmarshalText([]byte("even")), false},
		{"Design.MarshalText", combin.FieldDesign, "combin: Design: 7 is not a defined Design",
			second(combin.Design(7).MarshalText()), false},
		{"Order via JSON", combin.FieldOrder, `combin: Order: "sorted" is not one of "index", "shuffled"`,
			json.Unmarshal([]byte(`"sorted"`), &order), false},
		{"Constants, design", combin.FieldDesign, "combin: Design: 5 is not a defined Design",
			second(sub(8, 4).Constants(5, 2)), false},
		{"Reduction.UnmarshalText", loss.FieldReduction, `loss: r: "" is not one of "sum", "token-mean"`,
			red.UnmarshalText(nil), false},
		{"Boundary.MarshalText", lengthgate.FieldBoundary, "lengthgate: Boundary: 3 is not a defined Boundary",
			second(lengthgate.Boundary(3).MarshalText()), false},
		{"Boundary.UnmarshalText", lengthgate.FieldBoundary, `lengthgate: Boundary: "cut" is not one of "gate", "keep"`,
			bound.UnmarshalText([]byte("cut")), false},
		{"Preset.Options", advantage.FieldPreset, "advantage: Preset: -1 is not a defined Preset",
			second(advantage.Preset(-1).Options()), false},
		{"Preset.UnmarshalText", advantage.FieldPreset, `advantage: Preset: "ppo" is not one of "dr-grpo"`,
			preset.UnmarshalText([]byte("ppo")), false},
		{"Scale.UnmarshalText", advantage.FieldScale, `advantage: Scale: "std" is not one of "none", "group", "batch", "others"`,
			scale.UnmarshalText([]byte("std")), false},
		{"Whitening.MarshalText", advantage.FieldWhiten, "advantage: Whiten: 9 is not a defined Whitening",
			second(advantage.Whitening(9).MarshalText()), false},
		{"Whitening.UnmarshalText", advantage.FieldWhiten, `advantage: Whiten: "yes" is not one of "none", "verl", "openrlhf", "trl"`,
			whiten.UnmarshalText([]byte("yes")), false},
		{"zero Family", combin.FieldFamily, "combin: Family: the zero Family; make one with Subsets or Tuples",
			second(combin.Family{}.Count()), false},
		{"Count beyond the bound", combin.FieldFamily, "combin: Family: Subsets(1048576, 524288).Count: T has about",
			second(huge.Count()), true},
		{"MissProb beyond the bound", combin.FieldK, "combin: K: MissProb of Subsets(1048576, 524288) with 2 sets needs",
			second(huge.MissProb(2)), true},
		{"AppearanceDist beyond the bound", combin.FieldK, "combin: K: AppearanceDist of Subsets(64, 32) with 70000 sets",
			second(sub(64, 32).AppearanceDist(70000)), true},
		{"Rank beyond the bound", combin.FieldFamily, "combin: Family: Rank in Subsets(1048576, 524288)",
			second(huge.Rank(make([]int, 1<<19))), true},
		{"Rank, member", combin.FieldSet, "combin: g[1] = 1: repeats member 0",
			second(sub(8, 2).Rank([]int{1, 1})), false},
		{"Unrank, nil", combin.FieldRank, "combin: r: nil *big.Int",
			second(sub(8, 2).Unrank(nil)), false},
		{"Unrank, range", combin.FieldRank, "combin: r: 28 out of range [0, T = 28) for Subsets(8, 2)",
			second(sub(8, 2).Unrank(big.NewInt(28))), false},
		{"Sample, nil rnd", combin.FieldRand, "combin: rnd: nil random generator",
			second(sub(8, 2).Sample(nil, 2)), false},
		{"Config.M beyond the bound", "Config.Sets", "spiral: Config.Sets: the exact M of C(1048576, 524288) uniform K = 2 is beyond",
			second(Config{SearchTraces: 1 << 20, SetSize: 1 << 19, Sets: 2, AggregationsPerSet: 1}.M()), true},
	} {
		var e *InputError
		if !errors.As(tc.err, &e) {
			t.Errorf("%s: %T %v is not an *InputError", tc.name, tc.err, tc.err)
			continue
		}
		if e.Field != tc.field || len(tc.err.Error()) < len(tc.text) || tc.err.Error()[:len(tc.text)] != tc.text {
			t.Errorf("%s: Field %q, text %q; want %q, %q...", tc.name, e.Field, tc.err, tc.field, tc.text)
		}
		if errors.Is(tc.err, ErrTooCostly) != tc.costly || errors.Is(tc.err, combin.ErrTooCostly) != tc.costly {
			t.Errorf("%s: errors.Is(err, ErrTooCostly) = %v, want %v", tc.name, !tc.costly, tc.costly)
		}
	}
}
