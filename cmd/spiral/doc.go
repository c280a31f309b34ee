// Command spiral is a JSON Lines bridge to the SPIRAL reference library for
// trainers written in other languages: pipe one JSON object per problem in,
// read one per problem out, with no Go toolchain in the training loop.
//
// Usage:
//
//	spiral constants -traces N -size n -sets K [-ordered | -balanced]
//	spiral plan -traces N -size n -sets K [-ordered] [-shuffle] [-balanced] -seed S -problems P
//	spiral credit [-search-target L] [-aggregation-target L] [-boundary gate|keep] [-ordered] < lines
//	spiral passk -k 1,8,64 < lines
//	spiral vectors -out DIR
//
// "spiral <command> -h" prints the command's flags and the JSON schema of
// its input and output lines; the help texts are the reference for both.
//
//   - constants writes the exact constants of Proposition 3.1 (family size,
//     the probability that a trace is in no group, q_K, M) as decimal and
//     fraction strings, with their float64 values.
//   - plan writes the K groups of each of P problems, drawn by the root
//     package's Planner from a seeded PCG generator.
//   - credit computes, for each input line {"traces", "groups", "rewards",
//     optional "search_lengths" and "aggregation_lengths"}, the credit of
//     one problem with the root package's Config.Credit (the formulas of
//     package advantage, then the length gates of package lengthgate), and
//     writes the search and aggregation advantages, the set scores and set
//     advantages, the appearances and what the gates zeroed.
//   - passk computes pass@k with eval.PassAtK for each line {"n", "c"}.
//   - vectors writes the conformance vectors (see below).
//
// # Protocol of credit and passk
//
// Exactly one output line is written per input line, in input order.
// Output is flushed before the command waits for more input, so a trainer
// may write one line and then read its answer; in bulk, output is flushed
// about once per 64 KiB of input. Memory does not grow with the input: lines
// are read one at a time, at most MaxLine (1 MiB) bytes each.
//
// A bad line gets {"line": k, "error": "..."} (k counts input lines from
// 1) and the next line is processed as usual. Lines are decoded strictly:
// malformed JSON, a value that is not an object, an unknown or repeated
// field (names are case-sensitive, unlike encoding/json's matching),
// a null anywhere, a missing required field, a wrong type, an integer with
// a fraction or exponent, a number that overflows float64 (1e999), a blank
// line and a line over MaxLine bytes are errors, and so is everything the
// library rejects (a plan that does not fit, a reward above 1e30 in
// magnitude, lengths missing for an enabled gate, ...), in the library's
// words. Empty input is zero lines: no output, status 0.
//
// Numbers are written as encoding/json writes a float64, the shortest
// decimal that reads back to the same value, so no precision is lost.
//
// Exit status: 0 when every line succeeded, 1 when at least one line
// failed (stderr gives the count), 2 for bad flags or values, or a read or
// write error.
//
// # Conformance vectors
//
// cmd/spiral/testdata/vectors holds inputs and this program's outputs for
// credit (worked example, the paper's configuration, ragged sets, ordered
// tuples, gates with both boundaries, bad lines), constants (every
// 1 <= n <= N <= 9 with several K, both families, and larger
// configurations), pass@k and plan, described by its README.md and
// index.json. The tests regenerate them and fail on any difference, replay
// them from the files alone, and check them against exact rational
// references computed from the formulas. After an intended change, rewrite
// them with
//
//	go run ./cmd/spiral vectors -out cmd/spiral/testdata/vectors
//
// # Tests
//
// The tests take a few seconds. TestStreamManyLines streams 100,000 lines
// through credit (10,000 with -short; 1,000,000 with SPIRAL_LONG=1, about
// 15 s) and checks every output and that the live heap stays flat.
// FuzzLines fuzzes the line protocol of credit and passk:
//
//	go test -run '^$' -fuzz '^FuzzLines$' -fuzztime 30s ./cmd/spiral
package main
