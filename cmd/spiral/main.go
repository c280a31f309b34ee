package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK        = 0 // every line succeeded (or no lines)
	exitLineError = 1 // at least one line got an error line
	exitUsage     = 2 // bad flags or arguments, or a read or write error
)

const mainHelp = `usage: spiral <command> [flags]

spiral is a JSON Lines bridge to the SPIRAL reference library, for trainers
written in other languages.

Commands:
  constants  the constants of Proposition 3.1 for one (N1, n, K), family and design
  plan       draw the K sets of P problems, from a seed and a step
  credit     SPIRAL's credit of one problem per input line (after the length gates)
  group      group baselines (GRPO, Dr. GRPO, RLOO) of one batch of rows per input line
  loss       the loss coefficients of one set of rows per input line, for a trainer's reduction
  passk      pass@k of one problem per input line
  vectors    write the conformance vectors to a directory
  advise     rank configurations within a token budget by improvement per token

Run "spiral <command> -h" for a command's flags and JSON schema.
`

// streamHelp is the part of the help shared by the commands that read lines.
const streamHelp = `
Protocol: the input is read from standard input, one JSON object per line
("\n" or "\r\n" terminated; the last line may lack it). Exactly one output
line is written per input line, in input order, and output is flushed before
the command waits for more input, so a trainer may write one line and read
its answer. A line that fails gets the output line

  {"line": k, "error": "..."}   k: the input line's number, counting from 1

and the other lines are processed as usual. A line fails when it is malformed
JSON, not an object, has an unknown field (names are case-sensitive), a field
given twice, a null, a missing required field, a value of the wrong type, a
number that overflows (like 1e999) or an integer with a fraction or exponent,
is blank (empty or only white space), or is longer than 1 MiB (1048576
bytes; the rest of it is skipped). JSON has no NaN or Infinity: an encoder
must not write them (Python: json.dumps(..., allow_nan=False)). Numbers in
the output are float64 at full precision (the shortest decimal that reads
back to the same float64). Empty input gives no output and status 0.

Exit status: 0 when every line succeeded, 1 when at least one line failed
(stderr says how many), 2 for bad flags or a read or write error.
`

// run is the program: args are the arguments after the program name.
// It returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainHelp)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "constants":
		return runConstants(rest, stdout, stderr)
	case "plan":
		return runPlan(rest, stdout, stderr)
	case "credit":
		return runCredit(rest, stdin, stdout, stderr)
	case "group":
		return runGroup(rest, stdin, stdout, stderr)
	case "loss":
		return runLoss(rest, stdin, stdout, stderr)
	case "passk":
		return runPassK(rest, stdin, stdout, stderr)
	case "vectors":
		return runVectors(rest, stdout, stderr)
	case "advise":
		return runAdvise(rest, stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		if cmd == "help" && len(rest) > 0 {
			return run([]string{rest[0], "-h"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, mainHelp)
		return exitOK
	}
	fmt.Fprintf(stderr, "spiral: unknown command %q\n\n%s", cmd, mainHelp)
	return exitUsage
}

// newFlagSet returns the flag set of a command, which reports errors on
// stderr and leaves the help to parseFlags.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("spiral "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args and reports whether the command is done, with its
// exit status: after -h (the help on stdout, status 0), after a bad flag,
// or when positional arguments remain (none of the commands takes any).
func parseFlags(fs *flag.FlagSet, help string, args []string, stdout, stderr io.Writer) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, help)
			return exitOK, true
		}
		// The flag package has printed the error.
		return usageError(stderr, strings.TrimPrefix(fs.Name(), "spiral "), ""), true
	}
	if fs.NArg() > 0 {
		return usageError(stderr, strings.TrimPrefix(fs.Name(), "spiral "), fmt.Sprintf("unexpected argument %q", fs.Arg(0))), true
	}
	return 0, false
}

// usageError prints msg (if any) and a pointer to the help, and returns the
// usage status.
func usageError(stderr io.Writer, cmd, msg string) int {
	if msg != "" {
		fmt.Fprintf(stderr, "spiral %s: %s\n", cmd, clip(msg))
	}
	fmt.Fprintf(stderr, "run \"spiral %s -h\" for help\n", cmd)
	return exitUsage
}

// runStream runs h over standard input with the line limit MaxLine.
func runStream(cmd string, stdin io.Reader, stdout, stderr io.Writer, h handler) int {
	lines, failed, err := stream(stdin, stdout, MaxLine, h)
	if err != nil {
		fmt.Fprintf(stderr, "spiral %s: %v (after %d lines)\n", cmd, err, lines)
		return exitUsage
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "spiral %s: %d of %d lines failed\n", cmd, failed, lines)
		return exitLineError
	}
	return exitOK
}
