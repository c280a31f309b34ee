package main

import (
	"fmt"
	"strconv"
	"strings"
)

// A named is a library type whose values have names (a loss.Reduction, an
// advantage.Preset, Scale or Whitening): MarshalText names each defined
// value and refuses the first undefined one.
type named interface {
	~int
	MarshalText() ([]byte, error)
}

// parseName returns the value of T named text, or an error in the flag's
// words listing the names: the bridge says what its own flag was given,
// never the library's text about its own field.
func parseName[T named](flag, text string) (T, error) {
	var names []string
	for v := T(0); ; v++ {
		b, err := v.MarshalText()
		if err != nil {
			break
		}
		if string(b) == text {
			return v, nil
		}
		names = append(names, strconv.Quote(string(b)))
	}
	return 0, fmt.Errorf("%s = %s is not one of %s", flag, strconv.Quote(text), strings.Join(names, ", "))
}
