package combin

import (
	"fmt"

	"spiral/internal/inputerr"
)

// A Design says how the K sets of one problem are drawn from a family.
type Design int

const (
	// Uniform draws K distinct sets uniformly without replacement
	// ([Family.Sample], [Sampler]).
	Uniform Design = iota
	// Balanced draws K distinct subsets in which every trace appears
	// floor(K n/N1) or that plus one times ([Family.SampleBalanced],
	// [BalancedSampler]).
	Balanced
)

// String returns "uniform" or "balanced", or "Design(d)" for other values.
func (d Design) String() string {
	switch d {
	case Uniform:
		return "uniform"
	case Balanced:
		return "balanced"
	}
	return fmt.Sprintf("Design(%d)", int(d))
}

// MarshalText returns d's name; it returns an error for a value that is not
// Uniform or Balanced.
func (d Design) MarshalText() ([]byte, error) {
	if d != Uniform && d != Balanced {
		return nil, inputerr.Undefined("combin", FieldDesign, int(d), "Design")
	}
	return []byte(d.String()), nil
}

// UnmarshalText sets d from "uniform" or "balanced"; it returns an error
// naming the text otherwise.
func (d *Design) UnmarshalText(text []byte) error {
	switch string(text) {
	case "uniform":
		*d = Uniform
	case "balanced":
		*d = Balanced
	default:
		return inputerr.Name("combin", FieldDesign, text, "uniform", "balanced")
	}
	return nil
}

// An Order says in which order a set's candidates are presented to the
// aggregator.
type Order int

const (
	// IndexOrder presents a set as drawn: a subset in ascending trace index,
	// a tuple in its own order.
	IndexOrder Order = iota
	// Shuffled presents each set in a uniformly random order.
	Shuffled
)

// String returns "index" or "shuffled", or "Order(o)" for other values.
func (o Order) String() string {
	switch o {
	case IndexOrder:
		return "index"
	case Shuffled:
		return "shuffled"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// MarshalText returns o's name; it returns an error for a value that is not
// IndexOrder or Shuffled.
func (o Order) MarshalText() ([]byte, error) {
	if o != IndexOrder && o != Shuffled {
		return nil, inputerr.Undefined("combin", FieldOrder, int(o), "Order")
	}
	return []byte(o.String()), nil
}

// UnmarshalText sets o from "index" or "shuffled"; it returns an error naming
// the text otherwise.
func (o *Order) UnmarshalText(text []byte) error {
	switch string(text) {
	case "index":
		*o = IndexOrder
	case "shuffled":
		*o = Shuffled
	default:
		return inputerr.Name("combin", FieldOrder, text, "index", "shuffled")
	}
	return nil
}
