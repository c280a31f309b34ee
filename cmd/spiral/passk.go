package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"spiral/eval"
)

const passkHelp = `usage: spiral passk -k LIST < lines

passk computes, for one problem per input line, the unbiased estimator of
pass@k (Chen et al., 2021) from n samples of which c are correct,

    pass@k = 1 - C(n-c, k) / C(n, k),

with eval.PassAtK (a product of c rounded factors, within about
(2c+1) 2^-53 of the exact value; exactly 0 when c = 0 and exactly 1 when
n - c < k), for every k of LIST.

Flags:
  -k LIST   the values of k, comma-separated integers >= 1, none repeated,
            such as 1,8,64 (required); the output keeps this order

Input line:
  {"n": n,    required: the number of samples, 0 <= n <= 2^20
   "c": c}    required: the number of correct samples, 0 <= c <= n

Output line:
  {"pass_at_k": {"k": p, ...}}   one key per k of LIST, in LIST order, the key
                                 k written in decimal

A line fails (see below) when some k of LIST is larger than its n: pass@k is
undefined with fewer than k samples.
` + streamHelp

// MaxSamples is the largest n a passk line may have. PassAtK costs O(c) per
// k, so it bounds the work of one line.
const MaxSamples = 1 << 20

// passkSchema lists the fields of a passk input line.
var passkSchema = schema{names: []string{"n", "c"}, required: []bool{true, true}, nonFinite: "write a whole number"}

// passkLine is one decoded passk input line.
type passkLine struct {
	N int `json:"n"`
	C int `json:"c"`
}

// passkHandler computes pass@k for every k of ks, writing the output by
// hand so that its keys keep the order of ks.
type passkHandler struct {
	ks  []int
	out []byte
}

func (h *passkHandler) handle(line []byte) ([]byte, error) {
	var in passkLine
	if _, err := passkSchema.decode(line, &in); err != nil {
		return nil, err
	}
	if in.N > MaxSamples {
		return nil, fmt.Errorf("n = %d > %d, the largest n a line may have", in.N, MaxSamples)
	}
	h.out = append(h.out[:0], `{"pass_at_k":{`...)
	for i, k := range h.ks {
		p, err := eval.PassAtK(in.N, in.C, k)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			h.out = append(h.out, ',')
		}
		h.out = append(h.out, '"')
		h.out = strconv.AppendInt(h.out, int64(k), 10)
		h.out = append(h.out, `":`...)
		h.out = appendFloat(h.out, p)
	}
	h.out = append(h.out, "}}"...)
	return h.out, nil
}

// appendFloat appends the JSON of a finite float64 exactly as encoding/json
// writes it: the shortest decimal that reads back to x, in exponent form
// when |x| < 1e-6 or |x| >= 1e21.
func appendFloat(b []byte, x float64) []byte {
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// parseKs parses the -k list.
func parseKs(list string) ([]int, error) {
	var ks []int
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		k, err := strconv.Atoi(item)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("-k %q: %q is not an integer >= 1", list, item)
		}
		if slices.Contains(ks, k) {
			return nil, fmt.Errorf("-k %q: k = %d appears twice", list, k)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

func runPassK(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("passk", stderr)
	list := fs.String("k", "", "")
	if code, done := parseFlags(fs, passkHelp, args, stdout, stderr); done {
		return code
	}
	if err := requireFlags(fs, "k"); err != nil {
		return usageError(stderr, "passk", err.Error())
	}
	ks, err := parseKs(*list)
	if err != nil {
		return usageError(stderr, "passk", err.Error())
	}
	return runStream("passk", stdin, stdout, stderr, &passkHandler{ks: ks})
}
