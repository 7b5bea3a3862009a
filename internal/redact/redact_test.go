package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestScrubReplacesEverySpelling(t *testing.T) {
	secrets := Spellings("p@ss word/1")
	err := Scrub(fmt.Errorf("dial: %w", errors.New("bad user:p%40ss%20word%2F1 and p@ss+word%2F1 and p@ss word/1")), secrets)
	assertNoSecret(t, err.Error(), "p@ss word/1")
	if errors.Unwrap(err) != nil {
		t.Error("a scrubbed error must not unwrap to the text that held the password")
	}
	clean := errors.New("connection refused")
	if got := Scrub(clean, secrets); got != clean {
		t.Errorf("an error without the password was replaced: %v", got)
	}
}

// A password is masked where it stands as a value, never character by
// character: a one-character password leaves the rest of the message
// readable, wherever else its character occurs.
func TestScrubMasksAOneCharacterPasswordAsAWholeValue(t *testing.T) {
	secrets := Spellings("a")
	err := Scrub(errors.New(`connect to postgres://keb:a@db-a.example/broker?password=a&sslmode=disable: failed: password authentication failed for user "keb" (password 'a')`), secrets)
	want := `connect to postgres://keb:xxxxx@db-a.example/broker?password=xxxxx&sslmode=disable: failed: password authentication failed for user "keb" (password 'xxxxx')`
	if err.Error() != want {
		t.Fatalf("scrubbed\n got %s\nwant %s", err, want)
	}
	// Its escaped forms too, as a value.
	secrets = Spellings("@")
	err = Scrub(errors.New("dial postgres://keb:%40@db: refused; password=%40 at host@db"), secrets)
	if want := "dial postgres://keb:xxxxx@db: refused; password=xxxxx at host@db"; err.Error() != want {
		t.Fatalf("scrubbed\n got %s\nwant %s", err, want)
	}
	clean := errors.New(`password authentication failed for user "keb"`)
	if got := Scrub(clean, Spellings("a")); got != clean {
		t.Errorf("a message without the password as a value was replaced: %v", got)
	}
}

func assertNoSecret(t *testing.T, text string, passwords ...string) {
	t.Helper()
	for _, pw := range passwords {
		for _, spelling := range Spellings(pw) {
			if strings.Contains(text, spelling) {
				t.Fatalf("%q shows password %q", text, spelling)
			}
		}
	}
}

// The credentials of a URL as an Authorization header carries them, padded
// and not, so that an answer echoing the header is scrubbed too; nothing
// for a URL without a password.
func TestBasicAuthIsTheHeadersCredentials(t *testing.T) {
	got := BasicAuth("http://push:s3cret@gateway:9091")
	want := base64.StdEncoding.EncodeToString([]byte("push:s3cret"))
	if len(got) != 2 || got[0] != want || got[1] != strings.TrimRight(want, "=") {
		t.Fatalf("BasicAuth: %q, want %q and it unpadded", got, want)
	}
	for _, u := range []string{"http://gateway:9091", "http://push@gateway:9091", "http://push:@gateway", "::not a url"} {
		if got := BasicAuth(u); got != nil {
			t.Errorf("BasicAuth(%q) = %q, want nil", u, got)
		}
	}
}

// A string is shown with its password hidden in each form it comes in.
func TestStringHidesThePassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://keb:pw@db/broker":          "postgres://keb:xxxxx@db/broker",
		"host=db user=keb password=pw":         "host=db user=keb password=xxxxx",
		"http://push:pw@gateway:9091/metrics":  "http://push:xxxxx@gateway:9091/metrics",
		"postgres://keb@db/broker?sslmode=off": "postgres://keb@db/broker?sslmode=off",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
