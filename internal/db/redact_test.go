package db

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/redact"
)

// What the redactor shows in place of a part it cannot read.
const (
	hiddenURL   = "(hidden: not a well-formed URL)"
	hiddenPairs = "(hidden: not key=value)"
	hiddenAll   = "(hidden: not a URL or key=value pairs)"
	hiddenPart  = "(hidden)"
)

// thePassword stands for the password in the cases below; nothing else in
// them spells it, so wherever it shows, the password leaked.
const thePassword = "S3cr3tPw"

// redactCases are connection strings as operators write them, well formed or
// not, with what may be shown of each.
var redactCases = []struct{ name, in, want string }{
	{"URL", "postgres://keb:S3cr3tPw@db:5432/broker?sslmode=require", "postgres://keb:xxxxx@db:5432/broker?sslmode=require"},
	{"password in the query", "postgresql://keb@db/broker?password=S3cr3tPw", "postgresql://keb@db/broker?password=xxxxx"},
	{"sslpassword in any case, beside other keys", "postgres://keb@db/broker?sslmode=verify-full&SSLPassword=S3cr3tPw",
		"postgres://keb@db/broker?sslmode=verify-full&SSLPassword=xxxxx"},
	{"no password", "postgres://keb@db/broker", "postgres://keb@db/broker"},
	{"misspelt scheme", "postgress://keb:S3cr3tPw@host/keb", "postgress://keb:xxxxx@host/keb"},
	{"scheme of another database", "mysql://u:S3cr3tPw@h/db", "mysql://u:xxxxx@h/db"},
	{"password in the fragment", "postgres://keb@host/keb#S3cr3tPw", "postgres://keb@host/keb#xxxxx"},
	{"password in the path", "postgres://keb@host/password=S3cr3tPw", "postgres://keb@host/xxxxx"},
	{"a query pair with ';'", "postgres://keb@h/db?sslmode=disable;password=S3cr3tPw", "postgres://keb@h/db?xxxxx"},
	{"bad escape", "postgres://keb:S3cr3tPw%zz@db/broker", "postgres://" + hiddenURL},
	{"unescaped '/'", "postgres://keb:S3/cr3tPw@host/keb", "postgres://" + hiddenURL},
	{"unescaped '/', digits first, read as a port", "postgres://keb:12/S3cr3tPw@host/keb", "postgres://" + hiddenURL},
	{"unescaped '#'", "postgres://keb:S3#cr3tPw@host/keb", "postgres://" + hiddenURL},
	{"unescaped blank", "postgres://keb:S3 cr3tPw@host/keb", "postgres://" + hiddenURL},
	{"keyword/value", "host=db user=keb password=S3cr3tPw dbname=broker", "host=db user=keb password=xxxxx dbname=broker"},
	{"keyword/value, quoted, blanks around '='", `host=db password = 'S3 \'cr3tPw' dbname=broker`, "host=db password = xxxxx dbname=broker"},
	{"keyword/value, unquoted blank", "host=db password=S3 cr3tPw dbname=keb", "host=db password=xxxxx " + hiddenPairs},
	{"keyword/value, open quote", "host=db password='S3cr3tPw", "host=db " + hiddenPairs},
	{"keyword/value, trailing backslash", `host=db password=S3cr3tPw\`, "host=db " + hiddenPairs},
	{"keyword/value, an empty value unquoted", "host=db user= password=S3cr3tPw", "host=db user= " + hiddenPairs},
	{"user:password@host", "keb:S3cr3tPw@host", "keb:xxxxx@host"},
	{"user:password@host, '@' and ':' in the password", "keb:S3:cr@3tPw@host:5432/keb", "keb:xxxxx@" + hiddenPart},
	{"user@host, then password=", "keb@host password=S3cr3tPw", "keb@" + hiddenPart},
	{"user@host, then more", "keb:S3cr3tPw@0/keb?sslmode=disable&password=S3 cr3tPw", "keb:xxxxx@" + hiddenPart},
	{"password=...@host", "x password=S3cr3tPw@host", hiddenPart + "@host"},
	{"the password alone", "S3cr3tPw", hiddenAll},
}

func TestRedactHidesThePasswordInEveryForm(t *testing.T) {
	for _, c := range redactCases {
		t.Run(c.name, func(t *testing.T) {
			if got := redact.String(c.in); got != c.want {
				t.Errorf("redact.String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// Every connection string above that the driver cannot use is refused with
// an error that names it redacted, and none of them shows the password.
func TestRefusedConnectionStringsNeverShowThePassword(t *testing.T) {
	for _, c := range redactCases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := parseDSN(c.in)
			if err == nil {
				return // well formed: TestConnectionErrorsNeverShowThePassword connects with such
			}
			var bad *URLError
			if !errors.As(err, &bad) {
				t.Errorf("parseDSN(%q): %T, want *URLError (the caller's input to correct)", c.in, err)
			}
			if !strings.HasPrefix(err.Error(), "database URL "+c.want+": ") {
				t.Errorf("parseDSN(%q) = %q, want it to name the string as %q", c.in, err, c.want)
			}
			assertNoSecret(t, err.Error(), thePassword)
			if strings.Contains(err.Error(), "S3") || strings.Contains(err.Error(), "cr3tPw") {
				t.Errorf("parseDSN(%q) = %q shows part of the password", c.in, err)
			}
		})
	}
}

func TestRefusalsSayWhatIsWrong(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgress://keb:S3cr3tPw@host/keb", `scheme "postgress": want postgres or postgresql`},
		{"postgres://keb:S3/cr3tPw@host/keb", "must be percent-encoded"},
		{"keb:S3cr3tPw@host", "want postgres://USER:PASSWORD@HOST:PORT/DATABASE"},
		{"host=db password=S3 cr3tPw dbname=keb", "must be single-quoted"},
		{"host=db port=x password=S3cr3tPw", "invalid port"},
		// Not the password's fault: the userinfo ends before the host.
		{"postgres://keb:S3cr3tPw@host:54x2/keb", "the port after the host must be a number"},
	} {
		if _, _, err := parseDSN(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseDSN(%q) = %v, want it to say %q", c.in, err, c.want)
		}
	}
}

// FuzzRedact writes a password into every form of connection string, well
// formed or not, and requires that neither the redacted string nor the
// error refusing it shows any part of the password: the password is made to
// carry a marker nothing else in the string carries, and the marker must not
// show. `make fuzz` runs it.
func FuzzRedact(f *testing.F) {
	for form := range dsnForms {
		f.Add(uint8(form), "postgres", "keb", "db:5432", "", "")
		f.Add(uint8(form), "postgress", "keb", "host", "p@ss", "w/rd")
		f.Add(uint8(form), "mysql", "u", "h", "a b", "'c\\")
		f.Add(uint8(form), "postgres", "keb", "host", "12/", "#x?y=z")
		f.Add(uint8(form), "x", "k:e", "h@st", "%zz", "%41")
	}
	f.Fuzz(func(t *testing.T, form uint8, scheme, user, host, before, after string) {
		password := before + passwordMarker + after
		if leaks(scheme+" "+user+" "+host) || strings.ContainsAny(scheme, "= \t\n\r\v\f") ||
			strings.ContainsAny(user+host, "= \t\n\r\v\f'\"\\@:/?#&;%") {
			// The marker is the password's alone; the user, the host and
			// the scheme are not what makes a string malformed here (a
			// user "a=" makes any string key=value pairs, one with a
			// password "b" in the key a's value).
			t.Skip()
		}
		dsn := dsnForms[int(form)%len(dsnForms)](scheme, user, password, host)
		shown := redact.String(dsn)
		if leaks(shown) {
			t.Fatalf("redact.String(%q) = %q shows the password", dsn, shown)
		}
		if _, _, err := parseDSN(dsn); err != nil && leaks(err.Error()) {
			t.Fatalf("parseDSN(%q) = %q shows the password", dsn, err)
		}
	})
}

// passwordMarker is in every fuzzed password; its halves are checked apart,
// so a password cut in two shows too.
const passwordMarker = "Zq7Kw9Xj"

func leaks(text string) bool {
	return strings.Contains(text, passwordMarker[:4]) || strings.Contains(text, passwordMarker[4:])
}

// dsnForms write a password where each form of connection string puts one,
// as an operator would: escaped as the form wants, or raw as a mistake.
var dsnForms = []func(scheme, user, password, host string) string{
	// A URL of any scheme, the password raw: malformed when it holds
	// what a URL must escape.
	func(scheme, user, password, host string) string {
		return scheme + "://" + user + ":" + password + "@" + host + "/keb"
	},
	// A URL, the password escaped.
	func(scheme, user, password, host string) string {
		return scheme + "://" + url.UserPassword(user, password).String() + "@" + host + "/keb?sslmode=disable"
	},
	// A URL, the password in the query.
	func(scheme, user, password, host string) string {
		return scheme + "://" + user + "@" + host + "/keb?password=" + url.QueryEscape(password) + "&sslmode=disable"
	},
	// A URL, the password raw in the query but for '&' and '#': with
	// either, the URL itself says the password ends there.
	func(scheme, user, password, host string) string {
		return scheme + "://" + user + "@" + host + "/keb?sslmode=disable&password=" + strings.NewReplacer("&", "%26", "#", "%23").Replace(password)
	},
	// user:password@host, without a scheme.
	func(_, user, password, host string) string {
		return user + ":" + password + "@" + host
	},
	// keyword/value, the password quoted as the driver wants.
	func(_, user, password, host string) string {
		quoted := strings.ReplaceAll(strings.ReplaceAll(password, `\`, `\\`), `'`, `\'`)
		return fmt.Sprintf("host=%s user=%s password='%s' dbname=keb", host, user, quoted)
	},
	// keyword/value, the password bare, its blanks escaped: unescaped,
	// the driver ends the password at a blank, and what follows may well
	// read as the next pair (TestRedactHidesThePasswordInEveryForm has
	// the blank that does not).
	func(_, user, password, host string) string {
		return fmt.Sprintf("host=%s user=%s password=%s dbname=keb", host, user, escapeBlanks(password))
	},
	// keyword/value, the password first.
	func(_, user, password, host string) string {
		return fmt.Sprintf("password=%s host=%s user=%s", escapeBlanks(password), host, user)
	},
}

func escapeBlanks(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(" \t\n\r\v\f", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
