package spiraltest

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fusedArchs are the architectures whose compilers fuse a multiply and an
// add into one instruction.
var fusedArchs = []string{"arm64", "ppc64le", "s390x", "riscv64", "loong64"}

var (
	fusedOp  = regexp.MustCompile(`\bFN?M(ADD|SUB)[DS]?\b`)
	mulOp    = regexp.MustCompile(`\bF?MUL[DS]?\b`)
	position = regexp.MustCompile(`\(([^()]+\.go):(\d+)\)`)
)

// NoFusedMultiplyAdd compiles the package in the current directory, whose
// import path is pkg, for every architecture whose compiler fuses a
// multiply and an add (arm64, ppc64le, s390x, riscv64, loong64) and fails
// tb for every fused instruction the compiler chose: every product that
// feeds a sum must be rounded by an explicit float64 conversion, so that
// results have the same bits on every architecture. An explicit math.FMA
// (exactly rounded everywhere) is allowed: a fused instruction is accepted
// when its source line calls math.FMA. It runs the go command, so only
// with SPIRAL_LONG=1.
func NoFusedMultiplyAdd(tb testing.TB, pkg string) {
	tb.Helper()
	SkipUnlessLong(tb)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("no go command: %v", err)
	}
	sources := map[string][]string{}
	explicit := func(file string, line int) bool {
		lines, ok := sources[file]
		if !ok {
			b, err := os.ReadFile(file)
			if err != nil {
				return false
			}
			lines = strings.Split(string(b), "\n")
			sources[file] = lines
		}
		return line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "math.FMA(")
	}
	for _, arch := range fusedArchs {
		cmd := exec.Command(goCmd, "build", "-gcflags="+pkg+"=-S", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "GOARCH="+arch, "GOOS=linux", "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("GOARCH=%s: %v\n%s", arch, err, out)
		}
		if !mulOp.Match(out) {
			tb.Fatalf("GOARCH=%s: no floating-point multiply in the listing: the check has nothing to look at", arch)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !fusedOp.MatchString(line) {
				continue
			}
			if m := position.FindStringSubmatch(line); m != nil {
				if n, err := strconv.Atoi(m[2]); err == nil && explicit(m[1], n) {
					continue
				}
			}
			tb.Errorf("GOARCH=%s: fused multiply-add: %s", arch, strings.TrimSpace(line))
		}
	}
}
