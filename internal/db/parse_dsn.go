package db

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kyma-project/hap-reconciler/internal/redact"
)

// URLError is a connection string the driver cannot use: the caller's input
// to correct, not a failure of the database. Its text shows the string only
// redacted.
type URLError struct{ msg string }

func (e *URLError) Error() string { return e.msg }

// parseDSN reads dsn as the driver does and returns the passwords it holds,
// for scrubbing later errors. A string the driver would misread (a password
// left unescaped in a URL, a blank in an unquoted value, a scheme of another
// database) is refused before the driver sees it: the misread part would end
// up as a host, database or parameter name in the server's answers. A
// refusal names the string redacted, followed by the reason alone: the
// driver's own message repeats the string with a redaction of its own, which
// misses a password holding ':' or '@'.
func parseDSN(dsn string) (*pgx.ConnConfig, []string, error) {
	d := redact.Dissect(dsn)
	secrets := redact.Spellings(d.Passwords...)
	if d.Flaw != "" {
		return nil, secrets, &URLError{fmt.Sprintf("database URL %s: %s", d.Shown, d.Flaw)}
	}
	// The driver reads any other scheme as key=value pairs and says only
	// that they are invalid.
	if scheme, isURL := redact.Scheme(dsn); isURL && scheme != "postgres" && scheme != "postgresql" {
		return nil, secrets, &URLError{fmt.Sprintf("database URL %s: scheme %q: want postgres or postgresql", d.Shown, scheme)}
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, secrets, &URLError{scrubText(fmt.Sprintf("database URL %s: %s", d.Shown, parseReason(err)), secrets)}
	}
	return cfg, append(secrets, redact.Spellings(cfg.Password)...), nil
}

// parseReason is the driver's reason for refusing a connection string,
// without the string.
func parseReason(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "the driver cannot read it"
	}
	bare := *pe
	bare.ConnString = ""
	return strings.TrimPrefix(bare.Error(), "cannot parse ``: ")
}

// scrubText is scrub for a message built here.
func scrubText(msg string, secrets []string) string {
	return redact.Scrub(errors.New(msg), secrets).Error()
}
