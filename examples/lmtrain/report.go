package main

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// writeReport writes summary.json of one seed's run to dir.
func writeReport(dir string, s *Summary) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o644)
}
