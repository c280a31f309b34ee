package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// readAll returns every line of in as lineReader returns it (a long line
// as "LONG:<size>"), reading through a reader of the given buffer size.
func readAll(t testing.TB, in io.Reader, bufSize, max int) []string {
	t.Helper()
	lr := lineReader{r: bufio.NewReaderSize(in, bufSize), max: max}
	var got []string
	for {
		line, size, long, err := lr.next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if long {
			if line != nil {
				t.Fatalf("long line returned %q", line)
			}
			got = append(got, fmt.Sprintf("LONG:%d", size))
			continue
		}
		if int64(len(line)) != size {
			t.Fatalf("line %q with size %d", line, size)
		}
		got = append(got, string(line))
	}
}

// TestLineReader checks line splitting, terminators, the last line without
// a newline and the length limit at its boundary, with lines longer than
// the reader's buffer and input arriving one byte at a time.
func TestLineReader(t *testing.T) {
	const max = 20
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"\r\n", []string{""}},
		{"\n\n", []string{"", ""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\rb\n", []string{"a\rb"}},
		{"a\r\r\n", []string{"a\r"}},
		{x(max) + "\n" + x(max), []string{x(max), x(max)}},
		{x(max) + "\r\n", []string{x(max)}},
		{x(max+1) + "\n", []string{"LONG:21"}},
		{x(max+1) + "\r\n", []string{"LONG:21"}},
		{x(max + 1), []string{"LONG:21"}},
		{x(max+2) + "\r\nok\n", []string{"LONG:22", "ok"}},
		{x(200) + "\nok\n", []string{"LONG:200", "ok"}},
		{x(200) + "\r\nok", []string{"LONG:200", "ok"}},
		{x(200) + "\r\r\n", []string{"LONG:201"}},
		{x(200), []string{"LONG:200"}},
		{"ok\n" + x(999) + "\n\n" + x(5), []string{"ok", "LONG:999", "", x(5)}},
	} {
		for _, bufSize := range []int{16, 17, 64, 4096} {
			for _, oneByte := range []bool{false, true} {
				var in io.Reader = strings.NewReader(tt.in)
				if oneByte {
					in = iotest.OneByteReader(in)
				}
				got := readAll(t, in, bufSize, max)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%.40q, buffer %d, one byte %v (-want +got):\n%s", tt.in, bufSize, oneByte, diff)
				}
			}
		}
	}
}

// TestLineReaderMemory checks that a huge line is not kept: the reader's
// buffer stays within the limit plus one read buffer.
func TestLineReaderMemory(t *testing.T) {
	const max = 1000
	huge := io.MultiReader(strings.NewReader(strings.Repeat("y", 10<<20)), strings.NewReader("\nend\n"))
	lr := lineReader{r: bufio.NewReaderSize(huge, 4096), max: max}
	_, size, long, err := lr.next()
	if err != nil || !long || size != 10<<20 {
		t.Fatalf("size %d, long %v, err %v", size, long, err)
	}
	if c := cap(lr.buf); c > max+2+4096 {
		t.Errorf("buffer grew to %d bytes", c)
	}
	if line, _, _, _ := lr.next(); string(line) != "end" {
		t.Errorf("next line %q, want end", line)
	}
}

// echoHandler returns each line as a JSON string, and fails lines that
// start with "!".
type echoHandler struct{ calls int }

func (h *echoHandler) handle(line []byte) ([]byte, error) {
	h.calls++
	if line[0] == '!' {
		return nil, errors.New("bang")
	}
	return json.Marshal(string(line))
}

// TestStreamOneLinePerLine is a property test: for any input made of lines
// (blank, too long, failing, with "\r\n" or without a final newline),
// stream writes exactly one output line per input line, in order: the
// handler's result, or an error line with the right number.
func TestStreamOneLinePerLine(t *testing.T) {
	const max = 40
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "lines")
		var in strings.Builder
		want := make([]string, n)
		for i := range n {
			var line string
			switch kind := rapid.IntRange(0, 4).Draw(t, "kind"); kind {
			case 0:
				line = rapid.StringMatching(`[a-z {}":,]{1,40}`).Draw(t, "line")
				if strings.TrimLeft(line, " ") == "" {
					want[i] = fmt.Sprintf(`{"line":%d,"error":"blank line: want one JSON object per line"}`, i+1)
				} else {
					b, _ := json.Marshal(line)
					want[i] = string(b)
				}
			case 1:
				line = rapid.StringMatching(`[ \t]{0,5}`).Draw(t, "blank")
				want[i] = fmt.Sprintf(`{"line":%d,"error":"blank line: want one JSON object per line"}`, i+1)
			case 2:
				line = strings.Repeat("z", rapid.IntRange(max+1, 300).Draw(t, "long"))
				want[i] = fmt.Sprintf(`{"line":%d,"error":"line is %d bytes long, over the limit of %d bytes"}`, i+1, len(line), max)
			default:
				line = "!" + rapid.StringMatching(`[a-z]{0,10}`).Draw(t, "bang")
				want[i] = fmt.Sprintf(`{"line":%d,"error":"bang"}`, i+1)
			}
			in.WriteString(line)
			// A last line without a newline must not be empty: empty is no line.
			if i < n-1 || line == "" || rapid.Bool().Draw(t, "final newline") {
				in.WriteString(rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "newline"))
			}
		}
		var out bytes.Buffer
		lines, failed, err := stream(iotest.HalfReader(strings.NewReader(in.String())), &out, max, &echoHandler{})
		if err != nil {
			t.Fatal(err)
		}
		got := outputLines(t, out.String())
		if diff := cmp.Diff(want, got, cmpNilEmpty); diff != "" {
			t.Fatalf("input %q (-want +got):\n%s", in.String(), diff)
		}
		wantFailed := 0
		for _, w := range want {
			if strings.HasPrefix(w, `{"line":`) {
				wantFailed++
			}
		}
		if lines != int64(n) || failed != int64(wantFailed) {
			t.Fatalf("lines, failed = %d, %d, want %d, %d", lines, failed, n, wantFailed)
		}
	})
}

// cmpNilEmpty compares a nil slice equal to an empty one.
var cmpNilEmpty = cmp.Comparer(func(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
})

// TestStreamInteractive checks that the answer to a line arrives while the
// input is still open: a trainer writes one line and waits for its answer
// before it writes the next.
func TestStreamInteractive(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run([]string{"credit"}, inR, outW, io.Discard)
		outW.Close()
	}()
	answers := bufio.NewReader(outR)
	for i := range 3 {
		line := workedExampleLine
		if i == 1 {
			line = "{}"
		}
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		got := make(chan string)
		go func() {
			s, _ := answers.ReadString('\n')
			got <- s
		}()
		select {
		case s := <-got:
			if (i == 1) != strings.HasPrefix(s, `{"line":2,`) {
				t.Errorf("answer %d: %s", i+1, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to line %d while the input stays open", i+1)
		}
	}
	inW.Close()
	if code := <-done; code != exitLineError {
		t.Errorf("exit %d, want %d", code, exitLineError)
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestStreamReadError checks that a read error stops the command with
// status 2 after the answers to the complete lines before it.
func TestStreamReadError(t *testing.T) {
	in := &failingReader{data: []byte(workedExampleLine + "\n{}\n{\"tra"), err: errors.New("disk on fire")}
	var out, errOut bytes.Buffer
	code := run([]string{"credit"}, in, &out, &errOut)
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if got := outputLines(t, out.String()); len(got) != 2 {
		t.Errorf("%d output lines, want 2", len(got))
	}
	if !strings.Contains(errOut.String(), "reading standard input: disk on fire (after 2 lines)") {
		t.Errorf("stderr %q", errOut.String())
	}
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("pipe closed")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestStreamWriteError checks that a write error stops the command with
// status 2, whether it happens while flushing before a read or at the end.
func TestStreamWriteError(t *testing.T) {
	for _, oneByte := range []bool{false, true} {
		var in io.Reader = strings.NewReader(strings.Repeat(workedExampleLine+"\n", 10))
		if oneByte {
			in = iotest.OneByteReader(in) // a flush before every read
		}
		var errOut bytes.Buffer
		code := run([]string{"credit"}, in, &failingWriter{n: 1000}, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), "writing standard output: pipe closed") {
			t.Errorf("one byte %v: exit %d, stderr %q", oneByte, code, errOut.String())
		}
	}
}

// TestDecodeErrors checks the error of each kind of bad line, and that
// good lines decode, on the credit and passk schemas.
func TestDecodeErrors(t *testing.T) {
	for _, tt := range []struct {
		line string
		want string // "" for success
	}{
		{`{"n":4,"c":1}`, ""},
		{` { "c" : 1 , "n" : 4 } `, ""},
		{`{"\u006e":4,"c":1}`, ""}, // an escaped key is the same key
		{`{"n":4,"c":1,"\u006e":4}`, `field "n" appears twice`},
		{`{"n":4,"c":1,"n":4}`, `field "n" appears twice`},
		{`{"N":4,"c":1}`, `unknown field "N" (the fields are "n" and "c")`},
		{`{"n":4,"c":1,"x":{"n":null}}`, `unknown field "x"`},
		{`{"n":4}`, `missing field "c"`},
		{`{}`, `missing field "n"`},
		{`{"n":null,"c":1}`, `field "n" is null`},
		{`null`, `line is null, want a JSON object`},
		{` null `, `line is null, want a JSON object`},
		{`[]`, `line is a JSON array, want a JSON object`},
		{`4`, `line is a JSON number, want a JSON object`},
		{`true`, `line is a JSON bool, want a JSON object`},
		{`"s"`, `line is a JSON string, want a JSON object`},
		{`{"n":4,"c":1}{}`, `malformed JSON at byte 14: invalid character '{' after top-level value`},
		{`{"n":4,"c":1`, `malformed JSON at byte 12: unexpected end of JSON input`},
		{`{"n":4,"c":01}`, `malformed JSON`},
		{`{"n":4,"c":+1}`, `malformed JSON`},
		{`{"n":4,"c":NaN}`, `c is NaN, which is not a JSON number`},
		{`{"n":4,"c":Infinity}`, `c is Infinity, which is not a JSON number`},
		{`{"n":4,"c":-Infinity}`, `c is -Infinity`},
		{`{'n':4}`, `malformed JSON`},
		{`{"n":4,"c":1.0}`, `field "c": 1.0 is not an integer`},
		{`{"n":4,"c":1e0}`, `field "c": 1e0 is not an integer`},
		{`{"n":4,"c":9223372036854775808}`, `field "c": 9223372036854775808 is not an integer`},
		{`{"n":4,"c":"1"}`, `field "c": got a JSON string where an integer belongs`},
		{`{"n":4,"c":[1]}`, `field "c": got a JSON array where an integer belongs`},
		{`{"n":4,"c":true}`, `field "c": got a JSON bool where an integer belongs`},
	} {
		var in passkLine
		_, err := passkSchema.decode([]byte(tt.line), &in)
		checkErr(t, tt.line, err, tt.want)
	}
	for _, tt := range []struct {
		line string
		want string
	}{
		{`{"traces":8,"sets":[[0]],"rewards":[[1, 2],[3,NaN]]}`, `rewards[1][1] is NaN, which is not a JSON number (Python's json.dumps writes it unless allow_nan=False): write any number in its place and mark the output unscorable`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1, 2],[3,4]],"search_lengths":[1,Infinity]}`, `search_lengths[1] is Infinity`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1, 2],[3,4]], "x":"NaN"}`, `unknown field "x"`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1, 2],[3,4]]} NaN`, `malformed JSON`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1e308]]}`, ""},
		{`{"traces":8,"sets":[[0]],"rewards":[[1e309]]}`, `field "rewards": 1e309 overflows a float64`},
		{`{"traces":8,"sets":[[0]],"rewards":[[-1e309]]}`, `field "rewards": -1e309 overflows a float64`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1e-400]]}`, ""}, // underflows to 0, as strconv rounds
		{`{"traces":8,"sets":[[0]],"rewards":[[1,null]]}`, `field "rewards" holds a null at byte 40`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"search_lengths":null}`, `field "search_lengths" is null`},
		{`{"traces":8,"sets":[[0]],"rewards":[1]}`, `field "rewards": got a JSON number where an array of numbers belongs`},
		{`{"traces":8,"sets":[0],"rewards":[[1]]}`, `field "sets": got a JSON number where an array of integers belongs`},
		{`{"traces":8,"sets":{},"rewards":[[1]]}`, `field "sets": got a JSON object where an array of arrays of integers belongs`},
		{`{"traces":8,"sets":[["a"]],"rewards":[[1]]}`, `field "sets": got a JSON string where an integer belongs`},
		{`{"traces":8,"sets":[[0]],"rewards":[["null"]]}`, `field "rewards": got a JSON string where a number belongs`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"aggregation_lengths":[[1.5]]}`, `field "aggregation_lengths": 1.5 is not an integer`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"search_lengths":[],"aggregation_lengths":[]}`, ""},
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"Search_lengths":[]}`, `unknown field "Search_lengths"`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"s\"x":1}`, `unknown field "s\"x"`},
		{"{\"traces\":8,\"sets\":[[0]],\"rewards\":[[1]],\"\xff\":1}", `byte 43 (0xff) is not valid UTF-8`},
		// encoding/json reads a lone surrogate as U+FFFD, which would make
		// distinct strings equal: refused, naming the value and the byte.
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"\ud800":1}`, `a key: the escape \ud800 at byte 43 is half of a UTF-16 surrogate pair`},
		{`{"traces":8,"sets":[[0]],"rewards":[[1]],"s\ud83d\ude00":1}`, `unknown field "s😀"`},
	} {
		var in creditLine
		_, err := creditSchema.decode([]byte(tt.line), &in)
		checkErr(t, tt.line, err, tt.want)
	}
}

// TestLoneSurrogates: ids written as lone-surrogate escapes ("\ud800",
// "\ud801") were merged into one group, since encoding/json reads each as
// U+FFFD. Every half of a pair is refused with the value and byte; whole
// pairs and escaped backslashes are read as before.
func TestLoneSurrogates(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{`{"ids":["a","\ud800","\ud801"],"rewards":[1,0,1]}`, `ids[1]: the escape \ud800 at byte 14 is half of a UTF-16 surrogate pair`},
		{`{"ids":["\udc00"],"rewards":[1]}`, `ids[0]: the escape \udc00 at byte 10`},
		{`{"ids":["\uDBFF\u0041"],"rewards":[1]}`, `ids[0]: the escape \uDBFF at byte 10`},
		{`{"ids":["x\ud800"],"rewards":[1]}`, `ids[0]: the escape \ud800 at byte 11`},
		{`{"ids":["\ud83d\ude00","\uD83D\uDE01","\\ud800"],"rewards":[1,0,1]}`, ""},
		{"{\"ids\":[\"\xed\xa0\x80\"],\"rewards\":[1]}", `byte 10 (0xed) is not valid UTF-8`},
	} {
		var in groupLine
		_, err := groupSchema.decode([]byte(tt.line), &in)
		checkErr(t, tt.line, err, tt.want)
	}
}

// TestErrorsQuoteBoundedPrefix: an error quoting a value of 100,000 bytes
// (a number, a key, an id, a probability) was itself 100 KB long. Every
// error the bridge writes, on a line or on stderr, quotes at most a prefix
// of a value and its length: for values of 10,000 bytes, ten times the
// bound, and of 100,000 under SPIRAL_LONG=1 (a probability's digits cost
// their square to read).
func TestErrorsQuoteBoundedPrefix(t *testing.T) {
	size := 10_000
	if long() {
		size = 100_000
	}
	huge := strings.Repeat("7", size)
	members := make([]string, 20000)
	for i := range members {
		members[i] = strconv.Itoa(i)
	}
	manyMembers := "[" + strings.Join(members, ", ") + "]" // two equal sets of 20,000 members
	const most = 1 << 10
	for _, tt := range []struct {
		cmd  []string
		line string
	}{
		{[]string{"credit"}, `{"traces":8,"sets":[[0]],"rewards":[[1]],"` + huge + `":1}`},
		{[]string{"credit"}, `{"traces":` + huge + `,"sets":[[0]],"rewards":[[1]]}`},
		{[]string{"credit"}, `{"traces":8,"sets":[[0]],"rewards":[[1` + huge + `]]}`},
		{[]string{"credit"}, `{"traces":20000,"sets":[` + manyMembers + `,` + manyMembers + `],"rewards":[[1],[0]]}`},
		{[]string{"passk", "-k", "1"}, `{"n":` + huge + `.5,"c":1}`},
		{[]string{"group"}, `{"ids":[` + huge + `],"rewards":[1]}`},
		{[]string{"group"}, `{"ids":["` + huge + `"],"rewards":[1e31]}`},
		{[]string{"advise"}, `{"budget":10000,"search_length":100,"aggregation_length":100,"correct":"0.` + huge + `","found":"1/2","missed":"1/4"}`},
		{[]string{"advise"}, `{"budget":10000,"search_length":100,"aggregation_length":100,"correct":"` + huge + `","found":"1/2","missed":"1/4"}`},
		{[]string{"advise"}, `{"budget":` + huge + `,"search_length":100,"aggregation_length":100,"correct":"1/2","found":"1/2","missed":"1/4"}`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tt.cmd, strings.NewReader(tt.line+"\n"), &stdout, &stderr)
		if code == exitOK {
			t.Errorf("%s: accepted", tt.cmd)
		}
		if stdout.Len() > most || stderr.Len() > most {
			t.Errorf("%s: %d bytes on stdout and %d on stderr, want at most %d: %.300s / %.300s", tt.cmd, stdout.Len(), stderr.Len(), most, stdout.String(), stderr.String())
		}
	}
	if got, want := clip("x = 1"+huge[:70]+" <= 2"), "x = 1"+huge[:31]+"... (71 bytes) <= 2"; got != want {
		t.Errorf("clip = %q, want %q", got, want)
	}
	if got, want := clip("é"+strings.Repeat("ü", 40)), "é"+strings.Repeat("ü", 15)+"... (82 bytes)"; got != want {
		t.Errorf("clip = %q, want %q", got, want)
	}
}

func checkErr(t *testing.T, line string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v", line, err)
	case want != "" && err == nil:
		t.Errorf("%s: no error, want %q", line, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q, want %q", line, err, want)
	}
}

// TestAppendFloat checks appendFloat against encoding/json on special
// values and random bit patterns: 20,000 values by default, 100,000 with
// SPIRAL_LONG=1.
func TestAppendFloat(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.999999999999999e-7, 1e-7, 1e20, 1e21, 1e-9, 1.5e-10, 123456789e-300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1e-100}
	rnd := rand.New(rand.NewPCG(1, 2))
	values := 20_000
	if long() {
		values = 100_000
	}
	for len(xs) < values {
		if x := math.Float64frombits(rnd.Uint64()); !math.IsNaN(x) && !math.IsInf(x, 0) {
			xs = append(xs, x)
		}
		xs = append(xs, rnd.Float64(), rnd.NormFloat64()*1e-7)
	}
	for _, x := range xs {
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat(nil, x); string(got) != string(want) {
			t.Fatalf("appendFloat(%v) = %s, encoding/json %s", x, got, want)
		}
		back, err := strconv.ParseFloat(string(want), 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(x) {
			t.Fatalf("%s does not read back to %v", want, x)
		}
	}
}

// TestErrorsSpeakTheBridgesWords: no error line of the conformance
// vectors' bad inputs, nor of lines the library refuses deep inside,
// names a field of the Go API or carries a package prefix: each is said
// in the line's own fields (sets[2][3], len(sets), rewards[0][1]).
func TestErrorsSpeakTheBridgesWords(t *testing.T) {
	foreign := regexp.MustCompile(`Config\.|Batch\.|SoftOverlong|Max-|MaxLength|MaxSize|Plans|Members|RewardCounts|SetSizes|SearchTraces|AggregationsPerSet|SearchLengths|AggregationLengths|Epsilon|LeaveOneOut|Scale|Whiten|Preset|LossOptions|(advantage|combin|spiral|lengthgate|estimator|eval|loss): `)
	inputs := map[string][]string{
		"credit": {
			`{"traces":8,"sets":[[0,1],[0,1]],"rewards":[[1],[0]]}`,
			`{"traces":8,"sets":[[0,9]],"rewards":[[1]]}`,
			`{"traces":2,"sets":[[0,1],[1,0]],"rewards":[[1],[0]]}`,
			`{"traces":3,"sets":[[0,1,2,3]],"rewards":[[1]]}`,
			`{"traces":8,"sets":[[0,1]],"rewards":[[1e31]]}`,
			`{"traces":8,"sets":[[0,1]],"rewards":[[]]}`,
			`{"traces":8,"sets":[[0,1]],"rewards":[[1]],"search_lengths":[1]}`,
			`{"traces":8,"sets":[[0,1]],"rewards":[[1]],"aggregation_lengths":[[-1]]}`,
			`{"traces":8,"sets":[[0,-1]],"rewards":[[1]]}`,
		},
		"group": {
			`{"ids":[1,1],"rewards":[1e31,0]}`,
			`{"ids":[1],"rewards":[1,2]}`,
		},
	}
	for _, cmd := range []string{"credit", "group"} {
		in, err := os.ReadFile("testdata/vectors/" + cmd + "-errors.in.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		lines := append(strings.Split(strings.TrimSpace(string(in)), "\n"), inputs[cmd]...)
		stdout, _, _ := runCmd(t, strings.Join(lines, "\n")+"\n", cmd)
		for _, out := range outputLines(t, stdout) {
			if strings.HasPrefix(out, `{"line":`) && foreign.MatchString(out) {
				t.Errorf("%s: %s names the Go API", cmd, out)
			}
		}
	}
	for _, args := range [][]string{
		{"credit", "-overlong-max", "10", "-overlong-factor", "1e31"},
		{"credit", "-overlong-max", "10", "-overlong-buffer", "11"},
		{"plan", "-traces", "8", "-size", "9", "-sets", "1", "-seed", "1", "-problems", "1"},
		{"plan", "-traces", "8", "-size", "4", "-sets", "71", "-seed", "1", "-keys", "3"},
	} {
		if _, stderr, _ := runCmd(t, "", args...); foreign.MatchString(stderr) {
			t.Errorf("%v: %s names the Go API", args, stderr)
		}
	}
	// Errors the library reports as structured errors (advantage's
	// options, loss's lengths) and names the bridge checks itself: each
	// says the bridge's flag or field, once.
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"group", "-epsilon", "-1"}, "", "-epsilon: -1, want finite and >= 0"},
		{[]string{"group", "-epsilon", "NaN"}, "", "-epsilon: NaN"},
		{[]string{"group", "-best", "-leave-one-out"}, "", "-best: the best output's baseline needs the scale none or group and no leave-one-out baseline (scale none, leave-one-out true)"},
		{[]string{"group", "-best", "-scale", "batch"}, "", "-best: the best output's baseline needs the scale none or group and no leave-one-out baseline (scale batch, leave-one-out false)"},
		{[]string{"group", "-preset", "grpo"}, "", `-preset = "grpo" is not one of "dr-grpo", "rloo", "verl-grpo"`},
		{[]string{"group", "-scale", "std"}, "", `-scale = "std" is not one of "none", "group", "batch"`},
		{[]string{"group", "-whiten", "yes"}, "", `-whiten = "yes" is not one of "none", "verl"`},
		{[]string{"constants", "-traces", "8", "-size", "4", "-sets", "4", "-aggregations", "4", "-reduction", "mean"}, "", `-reduction = "mean" is not one of "sum", "token-mean"`},
		{[]string{"loss", "-reduction", "mean"}, "", `-reduction = "mean" is not one of`},
		{[]string{"credit", "-coefficients", "mean"}, "", `-coefficients = "mean" is not one of`},
		{[]string{"credit", "-coefficients", "token-mean"},
			`{"traces":2,"sets":[[0,1]],"rewards":[[1,0]],"search_lengths":[3,4],"aggregation_lengths":[[5,1000000000]]}`,
			"aggregation_lengths[0][1] = 1000000000: length outside [0, 536870912] tokens"},
		{[]string{"credit", "-coefficients", "token-mean"},
			`{"traces":2,"sets":[[0,1]],"rewards":[[1,0]],"search_lengths":[1000000000,4],"aggregation_lengths":[[5,1]]}`,
			"search_lengths[0] = 1000000000: length outside [0, 536870912] tokens"},
	} {
		stdin := tc.stdin
		if stdin != "" {
			stdin += "\n"
		}
		stdout, stderr, _ := runCmd(t, stdin, tc.args...)
		got := stderr + stdout
		if !strings.Contains(got, tc.want) {
			t.Errorf("%v: %s, want it to say %q", tc.args, got, tc.want)
		}
		// The command's own prefix ("spiral loss: ") is the one prefix.
		if m := foreign.FindString(strings.TrimPrefix(got, "spiral "+tc.args[0]+": ")); m != "" {
			t.Errorf("%v: %s names the Go API (%q)", tc.args, got, m)
		}
	}
}
