package lengthgate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGatesJSON(t *testing.T) {
	in := Gates{Search: Gate{Target: 4096}, Aggregation: Gate{Target: 2048, Boundary: KeepAtTarget}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"search":{"target":4096,"boundary":"gate"},"aggregation":{"target":2048,"boundary":"keep"}}`
	if string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var out Gates
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip = %+v, want %+v", out, in)
	}
	err = json.Unmarshal([]byte(`{"search":{"target":1,"boundary":"maybe"}}`), &out)
	if err == nil || !strings.Contains(err.Error(), `"maybe"`) {
		t.Fatalf("bad boundary: err = %v, want one naming \"maybe\"", err)
	}
	if _, err := json.Marshal(Gate{Boundary: Boundary(7)}); err == nil {
		t.Fatal("Marshal of an undefined boundary succeeded")
	}
}
