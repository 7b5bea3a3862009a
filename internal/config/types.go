package config

import (
	"encoding/json"
	"reflect"
	"time"
)

// Duration is a time.Duration written as "90s", "1h" or "1h30m".
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: durationType}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: s, Type: durationType}
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string, so a dumped config reads back.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

var durationType = reflect.TypeOf(durationDoc(""))

// durationDoc only names the expected type in messages.
type durationDoc string
