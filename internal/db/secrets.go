package db

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// redactedPassword replaces a password wherever this package shows a URL or
// an error.
const redactedPassword = "xxxxx"

// Redact returns the connection string with its password hidden, in both the
// URL form (postgres://user:password@host/db?password=...) and the
// keyword/value form (host=... password=...). A URL it cannot parse is not
// shown at all, since the password's position in it is then unknown.
func Redact(dsn string) string {
	if isURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(unparseable database URL)"
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedPassword)
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", redactedPassword)
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return keywordPassword.ReplaceAllString(dsn, "${1}"+redactedPassword)
}

// keywordPassword matches password=value in a keyword/value connection
// string, the value bare or single-quoted with backslash escapes.
var keywordPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// passwordsIn returns the passwords written in dsn, in every spelling an
// error message might repeat: as written, unescaped and escaped.
func passwordsIn(dsn string) []string {
	var found []string
	if isURL(dsn) {
		if u, err := url.Parse(dsn); err == nil {
			if pw, has := u.User.Password(); has {
				found = append(found, pw)
			}
			found = append(found, u.Query()["password"]...)
		}
	} else {
		for _, m := range keywordPassword.FindAllStringSubmatch(dsn, -1) {
			found = append(found, m[2], strings.Trim(m[2], "'"))
		}
	}
	return spellings(found...)
}

func spellings(passwords ...string) []string {
	var all []string
	for _, pw := range passwords {
		if pw == "" {
			continue
		}
		all = append(all, pw, url.QueryEscape(pw), url.PathEscape(pw), url.UserPassword("", pw).String()[1:])
	}
	// Longest first, so a spelling that contains another is replaced whole.
	sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	return all
}

// scrubbedError stands for an error whose text held a password. It has no
// Unwrap on purpose: the cause's text is exactly what must not get out.
type scrubbedError struct{ msg string }

func (e *scrubbedError) Error() string { return e.msg }

// scrub returns err unchanged when its text holds none of secrets, and
// otherwise an error with each secret replaced.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	leaked := false
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, redactedPassword)
			leaked = true
		}
	}
	if !leaked {
		return err
	}
	return &scrubbedError{msg: msg}
}
