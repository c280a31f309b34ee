// Package names is the one table of the names the library's fields have
// outside Go: in the bridge's JSON lines and flags (cmd/spiral) and in the
// C ABI's arguments (python/capi), which the Python package shares. Both
// rename an *InputError for their caller with InputError.In and a name
// from here, and leave its reason as the library wrote it.
package names

import (
	"strings"
	"unicode"

	"spiral"
	"spiral/advantage"
	"spiral/eval"
	"spiral/lengthgate"
	"spiral/loss"
)

// A Name is what a field of the library is called outside Go.
type Name struct {
	Line string // in a JSON line of the bridge (a credit line is one problem)
	Flag string // the bridge's flag that sets it
	ABI  string // the C ABI's argument; "" for the field's snake_case name
}

// A Table maps one package's field names (InputError.Field) to their
// names outside Go.
type Table map[string]Name

// Spiral names the root package's fields: a Batch's, a Config's (as
// "Config.<Field>") and LossOptions'.
var Spiral = Table{
	spiral.FieldPlans:              {Line: "sets", ABI: "sets"},
	spiral.FieldMembers:            {Line: "sets", ABI: "sets"},
	spiral.FieldRewards:            {Line: "rewards", ABI: "rewards"},
	spiral.FieldRewardCounts:       {Line: "rewards", ABI: "reward_counts"},
	spiral.FieldUnscorable:         {Line: "unscorable", ABI: "unscorable"},
	spiral.FieldSearchLengths:      {Line: "search_lengths", ABI: "search_lengths"},
	spiral.FieldAggregationLengths: {Line: "aggregation_lengths", ABI: "aggregation_lengths"},
	spiral.FieldMissingRate:        {Flag: "-missing-rate", ABI: "missing_rate"},

	"Config.SearchTraces":       {Line: "traces", Flag: "-traces"},
	"Config.SetSize":            {Line: "len(sets[0])", Flag: "-size"},
	"Config.Sets":               {Line: "len(sets)", Flag: "-sets"},
	"Config.AggregationsPerSet": {Line: "the length of the longest row of rewards"},
	"Config.Design":             {Flag: "-balanced"},
	"Config.Order":              {Flag: "-shuffle"},

	"Config.Overlong." + lengthgate.FieldMaxLength: {Flag: "-overlong-max"},
	"Config.Overlong." + lengthgate.FieldBuffer:    {Flag: "-overlong-buffer"},
	"Config.Overlong." + lengthgate.FieldFactor:    {Flag: "-overlong-factor"},
}

// Loss names package loss's fields (of Rows and Part).
var Loss = Table{
	loss.FieldUpdate:        {Line: "update", ABI: "update"},
	loss.FieldLengths:       {Line: "lengths", ABI: "lengths"},
	loss.FieldTerms:         {Line: "terms", ABI: "terms"},
	loss.FieldScale:         {Line: "scale", ABI: "scale"},
	loss.FieldOver:          {Line: "over_sequences", ABI: "over_sequences"},
	loss.FieldOverSequences: {Line: "over_sequences", ABI: "over_sequences"},
	loss.FieldOverTokens:    {Line: "over_tokens", ABI: "over_tokens"},
}

// Group names advantage.GroupOptions' fields; the C ABI reads them as
// JSON, in snake_case.
var Group = Table{
	advantage.FieldScale:   {Flag: "-scale"},
	advantage.FieldEpsilon: {Flag: "-epsilon"},
	advantage.FieldBest:    {Flag: "-best"},
	advantage.FieldClip:    {Flag: "-clip"},
	advantage.FieldWhiten:  {Flag: "-whiten"},
}

// Eval names package eval's fields: a test set's counts are the C ABI's
// arrays n and c.
var Eval = Table{
	eval.FieldProblemsN: {ABI: "n"},
	eval.FieldProblemsC: {ABI: "c"},
}

// Line returns the bridge's name in a JSON line for field, or field.
func (t Table) Line(field string) string {
	if n := t[field]; n.Line != "" {
		return n.Line
	}
	return field
}

// Flag returns the bridge's flag for field, or field.
func (t Table) Flag(field string) string {
	if n := t[field]; n.Flag != "" {
		return n.Flag
	}
	return field
}

// ABI returns the C ABI's name for field: the table's, else a Config
// field's JSON name, part by part without "Config." ("Config.Gates.Search.
// Target" is "gates.search.target"), else field.
func (t Table) ABI(field string) string {
	if n := t[field]; n.ABI != "" {
		return n.ABI
	}
	rest, ok := strings.CutPrefix(field, "Config.")
	if !ok {
		return field
	}
	parts := strings.Split(rest, ".")
	for i, p := range parts {
		parts[i] = Snake(p)
	}
	return strings.Join(parts, ".")
}

// Snake returns a Go field name in snake_case, the JSON name of the
// library's configuration fields: "SetSize" is "set_size".
func Snake(field string) string {
	var b []rune
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 {
				b = append(b, '_')
			}
			r = unicode.ToLower(r)
		}
		b = append(b, r)
	}
	return string(b)
}
