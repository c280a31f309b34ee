// Command spiral is a JSON Lines bridge to the SPIRAL reference library for
// trainers written in other languages: pipe one JSON object per problem in,
// read one JSON object per problem out.
//
// Usage:
//
//	spiral constants -traces N1 -size n -sets K [-ordered | -balanced]
//	spiral plan -traces N1 -size n -sets K [-ordered] [-shuffle] [-balanced] -seed S [-step T] (-problems P | -keys K1,K2,...)
//	spiral credit [-search-target L] [-aggregation-target L] [-boundary gate|keep]
//	              [-overlong-max L [-overlong-buffer B] [-overlong-factor F]] [-reward-range LOW,HIGH] [-ordered] < lines
//	spiral group [-preset NAME | -scale none|group|batch|others -epsilon E -bessel -leave-one-out] < lines
//	spiral loss -reduction NAME < lines
//	spiral passk -k 1,8,64 < lines
//	spiral vectors -out DIR
//	spiral advise [-table] [-top R] [-step-tokens S | -step-problems B] < request.json
//
// "spiral <command> -h" prints the command's flags and the JSON schema of
// its input and output lines; the help texts are the reference for both.
//
//   - constants writes q_K, M and the probability that a trace is in no set
//     (Proposition 3.1) for one configuration, exactly where combin can and
//     as floats always, from spiral.Config.Constants.
//   - plan writes the K sets of each problem, named by its key (0..P-1
//     or -keys), drawn by the root package's Planner.PlanTo: the plans a Go
//     trainer draws for the same seed S, step T and keys, each a function
//     of (S, T, key) alone.
//   - credit computes SPIRAL's credit of one problem per line
//     {"traces", "sets", "rewards", optional "unscorable", "search_lengths",
//     "aggregation_lengths"} with spiral.Config.CreditBatch, and writes the
//     search and aggregation advantages after the length gates, the set
//     scores and advantages, the appearances and what the gates did; with
//     DAPO's soft overlong punishment (-overlong-max) and OpenRLHF's
//     reward-range filter (-reward-range) when asked.
//   - group computes the group baselines of GRPO, Dr. GRPO and RLOO, as a
//     trainer's preset or explicit options, for one batch of rows per line
//     {"ids", "rewards", optional "unscorable"} with advantage.GroupRelative.
//   - loss writes the loss coefficients of one set of rows per line
//     {"update", "lengths", optional "terms"} for a trainer's reduction,
//     with loss.Coefficients.
//   - passk computes pass@k with eval.PassAtK for each line {"n", "c"}.
//   - vectors writes the conformance vectors of cmd/spiral/testdata/vectors.
//   - advise reads one request (a token budget and a reward model: find
//     one, needs m pieces or majority) and ranks the configurations that
//     fit it by the expected improvement per token of one training step at
//     a step budget (-step-tokens, -step-problems), with advise.Advise, or, given "config", answers that configuration's
//     row alone, with advise.Evaluate; as JSON or with -table as a table.
//
// # Protocol of credit, group and passk
//
// Exactly one output line is written per input line, in input order, and
// output is flushed before the command waits for more input, so a client
// may write one line and read its answer. A client that writes many lines
// before reading must read on another thread (or in lockstep): once the
// pipe buffers are full both sides wait for ever. The Python client in
// cmd/spiral/python reads on its own thread.
//
// A bad line gets {"line": k, "error": "..."} (k counts input lines from 1),
// naming the line's own fields and positions, such as rewards[1][0], and
// the next line is processed as usual. Lines are decoded strictly: malformed
// JSON, an unknown or repeated field, a null, a missing field, a wrong type,
// an integer with a fraction, a number that overflows float64, a blank line
// and a line over MaxLine (1 MiB) are errors. NaN and Infinity, which
// Python's json.dumps writes by default, are not JSON: they are named with
// their position and the way out, marking the output unscorable.
//
// Memory does not grow with the input, and an answer's size is proportional
// to its line's: a credit line names at most max(MinTraceBound, its length
// in bytes) traces. Numbers are written as the shortest decimal that reads
// back to the same float64.
//
// Exit status: 0 when every line succeeded, 1 when at least one line
// failed (stderr gives the count), 2 for bad flags or values, or a read or
// write error.
package main
