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

func TestOverlongJSON(t *testing.T) {
	in := NewSoftOverlong(20480, 4096)
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"max_length":20480,"buffer":4096,"factor":1}`; string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var out SoftOverlong
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Fatalf("round trip = %+v, %v", out, err)
	}
	b, err = json.Marshal(OverlongFilter{MaxLength: 4096})
	if err != nil || string(b) != `{"max_length":4096}` {
		t.Fatalf("OverlongFilter: %s, %v", b, err)
	}
}
