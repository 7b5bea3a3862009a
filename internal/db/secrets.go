package db

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
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

// scrub returns err unchanged when its text holds none of secrets as a whole
// value, and otherwise an error with each such occurrence replaced.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	leaked := false
	for _, s := range secrets {
		var replaced bool
		if msg, replaced = replaceWholeValue(msg, s, redactedPassword); replaced {
			leaked = true
		}
	}
	if !leaked {
		return err
	}
	return &scrubbedError{msg: msg}
}

// replaceWholeValue replaces each occurrence of value in text that stands as a
// value of its own: opened by the text's start, a blank or one of the
// characters a connection string or a message puts before a value
// (user:PASSWORD, password=PASSWORD, 'PASSWORD', "PASSWORD", (PASSWORD)), and
// closed likewise (PASSWORD@host, PASSWORD&sslmode, a quote, a blank, the
// end). The same characters anywhere else are not the password, and masking
// them would garble the message: a password "a" must not mask every "a".
func replaceWholeValue(text, value, with string) (string, bool) {
	if value == "" {
		return text, false
	}
	var b strings.Builder
	replaced := false
	start := 0 // where the text not yet written begins
	for from := 0; ; {
		i := strings.Index(text[from:], value)
		if i < 0 {
			break
		}
		i += from
		end := i + len(value)
		if opensValue(precedingRune(text, i)) && closesValue(followingRune(text[end:])) {
			b.WriteString(text[start:i])
			b.WriteString(with)
			start, from = end, end
			replaced = true
			continue
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		from = i + size
	}
	b.WriteString(text[start:])
	return b.String(), replaced
}

// opensValue reports whether r may stand right before a value; -1 is the
// text's start.
func opensValue(r rune) bool {
	return r < 0 || unicode.IsSpace(r) || strings.ContainsRune(`:='"([,;`, r)
}

// closesValue reports whether r may stand right after a value; -1 is the
// text's end.
func closesValue(r rune) bool {
	return r < 0 || unicode.IsSpace(r) || strings.ContainsRune(`@&'")],;#/:.`, r)
}

// precedingRune returns the rune before byte offset i of s, -1 at the start.
func precedingRune(s string, i int) rune {
	if i <= 0 {
		return -1
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

// followingRune returns the first rune of s, -1 when s is empty.
func followingRune(s string) rune {
	if s == "" {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
