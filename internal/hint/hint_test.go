package hint

import (
	"errors"
	"fmt"
	"testing"
)

func TestAHintIsReadThroughWrapping(t *testing.T) {
	cause := errors.New("connection refused")
	err := fmt.Errorf("reading: %w", New(cause, "cannot reach %s: check the address", "the server"))
	if got := err.Error(); got != "reading: cannot reach the server: check the address (connection refused)" {
		t.Errorf("got %q", got)
	}
	if h, ok := Of(err); !ok || h != "cannot reach the server: check the address" {
		t.Errorf("Of = %q, %v", h, ok)
	}
	if !errors.Is(err, cause) {
		t.Error("the hint hides its cause")
	}
	if Has(cause) || Has(nil) {
		t.Error("an error without a hint has one")
	}
}
