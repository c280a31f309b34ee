package combin

import "testing"

func TestDesignOrderText(t *testing.T) {
	for _, d := range []Design{Uniform, Balanced} {
		b, err := d.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Design = 7
		if err := got.UnmarshalText(b); err != nil || got != d || string(b) != d.String() {
			t.Errorf("%v: text %q, back %v, %v", d, b, got, err)
		}
	}
	for _, o := range []Order{IndexOrder, Shuffled} {
		b, err := o.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Order = 7
		if err := got.UnmarshalText(b); err != nil || got != o || string(b) != o.String() {
			t.Errorf("%v: text %q, back %v, %v", o, b, got, err)
		}
	}
	if Uniform.String() != "uniform" || Balanced.String() != "balanced" || IndexOrder.String() != "index" || Shuffled.String() != "shuffled" {
		t.Error("names changed")
	}
	if _, err := Design(2).MarshalText(); err == nil || Design(2).String() != "Design(2)" {
		t.Error("Design(2) marshals")
	}
	if _, err := Order(-1).MarshalText(); err == nil || Order(-1).String() != "Order(-1)" {
		t.Error("Order(-1) marshals")
	}
	var d Design
	if err := d.UnmarshalText([]byte("Uniform")); err == nil {
		t.Error("design text is case sensitive")
	}
	var o Order
	if err := o.UnmarshalText([]byte("")); err == nil {
		t.Error("empty order text accepted")
	}
}
