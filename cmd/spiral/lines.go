package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLine is the longest input line the stream subcommands accept: 1 MiB,
// not counting the line terminator ("\n" or "\r\n"). A longer line gets an
// error line; the rest of it is read and discarded, and the next line is
// processed as usual.
const MaxLine = 1 << 20

// readSize is the size of the input buffer. Output is flushed before every
// read from the input, so a trainer that writes one line and waits for its
// answer gets it, and a bulk run flushes about once per readSize bytes of
// input.
const readSize = 64 << 10

// handler turns one input line into one output line. handle returns the
// output JSON object without a newline (valid until the next call) or an
// error that becomes the line's {"line": k, "error": "..."}.
type handler interface {
	handle(line []byte) ([]byte, error)
}

// stream reads in line by line, runs h on each line and writes exactly one
// line to out per input line, in input order. A line longer than maxLine
// bytes or blank (empty or only white space) is an error line without
// calling h. A last line without "\n" is a line; empty input has no lines.
//
// Output is buffered and flushed before every read of in (so a caller
// waiting for the answer to the line it just wrote never waits forever) and
// at the end. stream returns the number of lines and of failed lines, and
// a non-nil error only for a read or write error, after which it stops.
func stream(in io.Reader, out io.Writer, maxLine int, h handler) (lines, failed int64, err error) {
	w := bufio.NewWriterSize(out, readSize)
	fr := &flushReader{r: in, w: w}
	lr := lineReader{r: bufio.NewReaderSize(fr, readSize), max: maxLine}
	var errOut jsonOut
	for {
		line, size, long, rerr := lr.next()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if fr.werr != nil {
				return lines, failed, fr.werr
			}
			return lines, failed, fmt.Errorf("reading standard input: %w", rerr)
		}
		lines++
		var res []byte
		var herr error
		switch {
		case long:
			herr = fmt.Errorf("line is %d bytes long, over the limit of %d bytes", size, maxLine)
		case len(bytes.TrimLeft(line, " \t\r")) == 0:
			herr = errors.New("blank line: want one JSON object per line")
		default:
			res, herr = h.handle(line)
		}
		if herr != nil {
			failed++
			res = errOut.encode(lineError{Line: lines, Error: clip(herr.Error())})
		}
		w.Write(res)
		if err := w.WriteByte('\n'); err != nil {
			return lines, failed, fmt.Errorf("writing standard output: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return lines, failed, fmt.Errorf("writing standard output: %w", err)
	}
	return lines, failed, nil
}

// lineError is the output line for an input line that failed.
type lineError struct {
	// Line is the input line number, counting from 1.
	Line  int64  `json:"line"`
	Error string `json:"error"`
}

// flushReader flushes w before every read from r, so that no output waits in
// the buffer while the program waits for input.
type flushReader struct {
	r    io.Reader
	w    *bufio.Writer
	werr error // the flush error, if a flush failed
}

func (f *flushReader) Read(p []byte) (int, error) {
	if f.w.Buffered() > 0 {
		if err := f.w.Flush(); err != nil {
			f.werr = fmt.Errorf("writing standard output: %w", err)
			return 0, f.werr
		}
	}
	return f.r.Read(p)
}

// lineReader splits its input into lines of at most max bytes, reading a
// longer line to its end without keeping it. Its memory is bounded by max
// plus the reader's buffer, whatever the input.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line without its terminator ("\n", and a "\r"
// before it) and its length in bytes without the terminator. For a line
// longer than max it returns long = true and a nil line, having read the
// whole line. At the end of the input it returns io.EOF; any other error
// is the reader's.
func (lr *lineReader) next() (line []byte, size int64, long bool, err error) {
	lr.buf = lr.buf[:0]
	keep := int64(lr.max) + 2 // room for "\r\n"
	var prev byte             // the last byte of the previous chunk
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if size += int64(len(chunk)); size <= keep {
			lr.buf = append(lr.buf, chunk...)
		}
		switch err {
		case bufio.ErrBufferFull:
			prev = chunk[len(chunk)-1]
			continue
		case nil, io.EOF:
			if err == io.EOF && size == 0 {
				return nil, 0, false, io.EOF
			}
		default:
			return nil, size, false, err
		}
		if size <= keep {
			line := bytes.TrimSuffix(lr.buf, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) > lr.max {
				return nil, int64(len(line)), true, nil
			}
			return line, int64(len(line)), false, nil
		}
		// Over max bytes without the terminator, which is not kept: count it.
		if err == nil {
			size--
			if before := len(chunk) - 2; (before >= 0 && chunk[before] == '\r') || (before < 0 && prev == '\r') {
				size--
			}
		}
		return nil, size, true, nil
	}
}

// jsonOut encodes values as JSON without escaping <, > and &, into a buffer
// it reuses.
type jsonOut struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// encode returns the JSON of v without a newline, valid until the next call.
// v must be a value that encoding/json encodes without error (the bridge's
// own output types, whose floats are all finite).
func (o *jsonOut) encode(v any) []byte {
	if o.enc == nil {
		o.enc = json.NewEncoder(&o.buf)
		o.enc.SetEscapeHTML(false)
	}
	o.buf.Reset()
	if err := o.enc.Encode(v); err != nil {
		panic(fmt.Sprintf("spiral: encoding %T: %v", v, err)) // a bug: every output is finite
	}
	return bytes.TrimSuffix(o.buf.Bytes(), []byte("\n"))
}

// schema is the set of top-level fields of one kind of input line.
type schema struct {
	names    []string // the JSON keys, exact (case-sensitive)
	required []bool   // required[i]: names[i] must be present
	// nonFinite ends the error of a NaN or infinity found in the line:
	// what to write instead, in the command's terms.
	nonFinite string
}

// decode decodes one input line into v (a pointer to a struct whose JSON
// keys are s.names) strictly: the line must be exactly one JSON object with
// no key outside s.names (compared exactly, not case-insensitively as
// encoding/json does), no repeated key, no null anywhere, every required
// key present, numbers that fit their Go types (so no overflow to
// infinity, like 1e999) and nothing after the object. It returns which keys
// were present, or an error that names the field.
//
// v must be freshly zeroed or hold slices to reuse: fields absent from the
// line keep their old values, and the caller uses present to tell.
func (s *schema) decode(line []byte, v any) (present []bool, err error) {
	if err := json.Unmarshal(line, v); err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok {
			if path, token, found := findNonFinite(line); found {
				return nil, fmt.Errorf("%s is %s, which is not a JSON number (Python's json.dumps writes it unless allow_nan=False): %s", path, token, s.nonFinite)
			}
		}
		return nil, describeJSONError(err)
	}
	return s.check(line)
}

// check does the checks of decode that encoding/json does not, on a line
// that json.Unmarshal accepted into a struct: so the line is one object, or
// null. It scans the line once, skipping strings.
func (s *schema) check(line []byte) ([]bool, error) {
	if !utf8.Valid(line) {
		return nil, invalidUTF8(line)
	}
	present := make([]bool, len(s.names))
	depth := 0
	expectKey := false
	field := "" // the current top-level key
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			start := i
			for i++; line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
					if line[i] == 'u' {
						skip, err := checkSurrogate(line, i-1, depth == 1 && expectKey)
						if err != nil {
							return nil, err
						}
						i += skip
					}
				}
			}
			if depth == 1 && expectKey {
				expectKey = false
				key, err := unquote(line[start : i+1])
				if err != nil {
					return nil, err
				}
				k := slices.Index(s.names, key)
				if k < 0 {
					return nil, fmt.Errorf("unknown field %q (the fields are %s)", key, quoteList(s.names))
				}
				if present[k] {
					return nil, fmt.Errorf("field %q appears twice", key)
				}
				present[k] = true
				field = key
			}
		case '{':
			depth++
			if depth == 1 {
				expectKey = true
			}
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 1 {
				expectKey = true
			}
		case 'n': // outside strings, only the literal null has an n
			switch depth {
			case 0:
				return nil, errors.New("line is null, want a JSON object")
			case 1:
				return nil, fmt.Errorf("field %q is null: give a value or leave the field out", field)
			}
			return nil, fmt.Errorf("field %q holds a null at byte %d", field, i+1)
		}
	}
	for k, name := range s.names {
		if s.required[k] && !present[k] {
			return nil, fmt.Errorf("missing field %q", name)
		}
	}
	return present, nil
}

// checkSurrogate checks the \\u escape at line[at:] of a string that
// encoding/json accepted: a UTF-16 surrogate (\\ud800 to \\udfff) must be a
// high one followed at once by a low one. encoding/json replaces a lone
// surrogate by U+FFFD, so that "\\ud800" and "\\ud801" would read as the
// same string (two ids as one group); the line is refused instead, naming
// the value (ids[1]), or a key when key is true, and the byte (counting
// from 1). For a valid pair it returns 10, the bytes to skip to the
// pair's last.
func checkSurrogate(line []byte, at int, key bool) (skip int, err error) {
	r := hex4(line[at+2 : at+6])
	if r < 0xd800 || r > 0xdfff {
		return 0, nil
	}
	if r <= 0xdbff && at+12 <= len(line) && line[at+6] == '\\' && line[at+7] == 'u' {
		if lo := hex4(line[at+8 : at+12]); lo >= 0xdc00 && lo <= 0xdfff {
			return 10, nil
		}
	}
	where := pathAt(line, at)
	if key {
		where = "a key"
	}
	return 0, fmt.Errorf("%s: the escape %s at byte %d is half of a UTF-16 surrogate pair; a string must be valid Unicode (it would otherwise read as U+FFFD, the same as any other such string)",
		where, line[at:at+6], at+1)
}

// hex4 returns the value of four hexadecimal digits (valid: encoding/json
// accepted them).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// invalidUTF8 names the first byte of line that is not valid UTF-8, which
// encoding/json would read as U+FFFD.
func invalidUTF8(line []byte) error {
	i := 0
	for i < len(line) {
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return fmt.Errorf("byte %d (0x%02x) is not valid UTF-8: JSON text is UTF-8 (it would otherwise read as U+FFFD, the same as any other invalid byte)", i+1, line[i])
}

// maxQuote is the most bytes of one value an error quotes: a longer run
// of characters without a space (a number of 100,000 digits, a key or an
// id of a megabyte) is cut to its first bytes and its length.
const maxQuote = 64

// clip bounds every value quoted in msg: each run of more than maxQuote
// bytes without a space is cut to its first maxQuote/2 bytes (at a
// character boundary), "...", and its length in bytes. The bridge applies
// it to every error it writes, so that an error stays short whatever the
// input.
func clip(msg string) string {
	if len(msg) <= maxQuote {
		return msg
	}
	var b strings.Builder
	run := 0 // start of the current run of non-space bytes
	for i := 0; i <= len(msg); i++ {
		if i < len(msg) && msg[i] != ' ' && msg[i] != '\n' {
			continue
		}
		if w := msg[run:i]; len(w) > maxQuote {
			cut := maxQuote / 2
			for cut > 0 && !utf8.RuneStart(w[cut]) {
				cut--
			}
			fmt.Fprintf(&b, "%s... (%d bytes)", w[:cut], len(w))
		} else {
			b.WriteString(w)
		}
		if i < len(msg) {
			b.WriteByte(msg[i])
		}
		run = i + 1
	}
	return b.String()
}

// findNonFinite looks in line, outside strings, for the first of the tokens
// NaN, Infinity, -Infinity and +Infinity, which JSON does not have but
// Python's json.dumps (and JavaScript's NaN-tolerant writers) write, and
// returns where it is (see pathAt) and the token.
func findNonFinite(line []byte) (path, token string, found bool) {
	depth := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			i = stringEnd(line, i)
			continue
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
			continue
		}
		for _, tok := range [...]string{"NaN", "Infinity", "-Infinity", "+Infinity"} {
			if depth > 0 && bytes.HasPrefix(line[i:], []byte(tok)) {
				return pathAt(line, i), tok, true
			}
		}
	}
	return "", "", false
}

// stringEnd returns the index of the closing quote of the string that
// starts at line[i], or len(line) if it has none.
func stringEnd(line []byte, i int) int {
	for i++; i < len(line) && line[i] != '"'; i++ {
		if line[i] == '\\' {
			i++
		}
	}
	return min(i, len(line))
}

// pathAt returns where byte pos of line is, as the top-level field and the
// array indices down to it ("rewards[0][1]", "a value" outside any field),
// for a line that is one JSON object, well formed up to pos. It reads line
// once and keeps a stack of array indices only as deep as the line nests.
func pathAt(line []byte, pos int) string {
	type level struct {
		array bool
		index int
	}
	var stack []level
	field := ""
	expectKey := false
	for i := 0; i < pos && i < len(line); i++ {
		switch line[i] {
		case '"':
			start := i
			i = stringEnd(line, i)
			if i >= pos {
				i = pos // pos is inside this string
				break
			}
			if len(stack) == 1 && expectKey {
				expectKey = false
				if key, err := unquote(line[start : i+1]); err == nil {
					field = key
				}
			}
		case '{':
			stack = append(stack, level{})
			expectKey = true
		case '[':
			stack = append(stack, level{array: true})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].array {
					stack[n-1].index++
				} else {
					expectKey = true
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString(field)
	if field == "" {
		b.WriteString("a value")
	}
	// Indices of the arrays inside the field (below the top-level object).
	for _, l := range stack[min(1, len(stack)):] {
		if l.array {
			fmt.Fprintf(&b, "[%d]", l.index)
		}
	}
	return b.String()
}

// unquote decodes a JSON string literal (one encoding/json accepted).
func unquote(lit []byte) (string, error) {
	if bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", fmt.Errorf("malformed key %s: %v", lit, err)
	}
	return s, nil
}

// quoteList writes names as "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// describeJSONError rewrites an error of json.Unmarshal in the bridge's
// terms: JSON field names and JSON types, no Go type names.
func describeJSONError(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("malformed JSON at byte %d: %v", syn.Offset, err) // bytes count from 1
	}
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return fmt.Errorf("malformed JSON: %v", err)
	}
	if typ.Field == "" {
		return fmt.Errorf("line is a JSON %s, want a JSON object", typ.Value)
	}
	want := describeType(typ.Type)
	if num, ok := strings.CutPrefix(typ.Value, "number "); ok {
		switch typ.Type.Kind() {
		case reflect.Int:
			return fmt.Errorf("field %q: %s is not %s (a whole number of at most 64 bits, without fraction or exponent)", typ.Field, num, want)
		case reflect.Float64:
			return fmt.Errorf("field %q: %s overflows a float64 (a finite number is required)", typ.Field, num)
		}
	}
	return fmt.Errorf("field %q: got a JSON %s where %s belongs", typ.Field, typ.Value, want)
}

// describeType names the JSON shape of a field's Go type.
func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[[]json.RawMessage](): // group's ids
		return "an array of strings or integers"
	case reflect.TypeFor[json.RawMessage]():
		return "a string or an integer"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		elem := describeType(t.Elem())
		elem = strings.TrimPrefix(strings.TrimPrefix(elem, "an "), "a ")
		switch {
		case strings.HasPrefix(elem, "array"):
			elem = strings.Replace(elem, "array", "arrays", 1)
		default:
			elem += "s"
		}
		return "an array of " + elem
	}
	return t.String()
}
