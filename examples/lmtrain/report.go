package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
)

// writeReport writes summary.json of one seed's run to dir, indented, each
// list of numbers on one line (the per-problem lists are long).
func writeReport(dir string, s *Summary) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(compactNumbers(js), '\n'), 0o644)
}

// compactNumbers puts every JSON array that holds only numbers (or null)
// on one line: "[1, 2.5, null]".
func compactNumbers(js []byte) []byte {
	var out bytes.Buffer
	for i := 0; i < len(js); i++ {
		if js[i] == '[' {
			if end, ok := numberList(js, i); ok {
				var items [][]byte
				for _, f := range bytes.Split(js[i+1:end], []byte(",")) {
					if f = bytes.TrimSpace(f); len(f) > 0 {
						items = append(items, f)
					}
				}
				out.WriteByte('[')
				out.Write(bytes.Join(items, []byte(", ")))
				out.WriteByte(']')
				i = end
				continue
			}
		}
		out.WriteByte(js[i])
	}
	return out.Bytes()
}

// numberList reports whether the array opening at js[i] holds only
// numbers and null, and where it closes.
func numberList(js []byte, i int) (int, bool) {
	for j := i + 1; j < len(js); j++ {
		switch c := js[j]; {
		case c == ']':
			return j, true
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E', c == ',',
			c == ' ', c == '\n', c == '\t', c == 'n', c == 'u', c == 'l':
		default:
			return 0, false
		}
	}
	return 0, false
}
