// Package redact decides what of a string holding credentials may be Shown:
// a connection string in any of its forms, or a URL with a password. It is
// the project's one redactor; the database adapter and the Pushgateway push
// both show what it leaves.
package redact

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// redactedPassword replaces a password wherever a string or an error is
// shown.
const redactedPassword = "xxxxx"

// String returns s with its password hidden, whatever its form: a URL of any
// scheme (user:password@ and ?password=), keyword/value pairs
// (password=...), or user:password@host without a scheme. What cannot be
// read as any of them is not shown where a password may stand in it, since
// where the password ends is then unknown. This is the one place that
// decides what of a string holding credentials may be shown.
func String(s string) string { return Dissect(s).Shown }

// Dissection is a string holding credentials taken apart for showing.
type Dissection struct {
	// Shown is the string with its passwords hidden.
	Shown string
	// Passwords are the passwords it holds, or what may be one where it is
	// not well formed.
	Passwords []string
	// Flaw says what is wrong with the string where part of it had to be
	// hidden as unreadable; a driver would misread it, so it is refused.
	Flaw string
}

// Why part of a connection string is hidden.
const (
	hiddenURL   = "(hidden: not a well-formed URL)"
	hiddenPairs = "(hidden: not key=value)"
	hiddenAll   = "(hidden: not a URL or key=value pairs)"
	hiddenPart  = "(hidden)"

	flawURL   = "not a well-formed URL: a password holding any of : / ? # @ % or a blank must be percent-encoded"
	flawPort  = "not a well-formed URL: the port after the host must be a number from 1 to 65535"
	flawPairs = "not key=value pairs from the hidden part on: a value holding a blank or a quote must be single-quoted, with \\' for a quote, and an empty value written ''"
	flawForm  = "want postgres://USER:PASSWORD@HOST:PORT/DATABASE or key=value pairs (host=... user=... password=... dbname=...)"
)

// Dissect reads dsn in the form its start shows: key=value pairs, a URL of
// any scheme, else user:password@host.
func Dissect(dsn string) Dissection {
	switch {
	case strings.TrimSpace(dsn) == "":
		return Dissection{Shown: dsn}
	case keywordStart.MatchString(dsn):
		return dissectKeywords(dsn)
	case urlScheme.MatchString(dsn):
		return dissectURL(dsn)
	}
	return dissectUserinfo(dsn)
}

// urlScheme matches the start of a URL of any scheme (RFC 3986), so that a
// misspelt scheme (postgress://, mysql://) is still read as a URL.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// keywordStart matches the start of a keyword/value connection string.
var keywordStart = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*=`)

// Scheme returns the scheme of s when s starts as a URL of any scheme does.
func Scheme(s string) (scheme string, isURL bool) {
	if !urlScheme.MatchString(s) {
		return "", false
	}
	return schemeOf(s), true
}

// schemeOf returns the scheme of a string urlScheme matches.
func schemeOf(dsn string) string {
	return strings.TrimSuffix(urlScheme.FindString(dsn), "://")
}

// dissectURL hides the userinfo password, the value of every query key
// naming a password, the fragment, which the driver ignores and a password
// pasted in the wrong place may sit in, and a path naming a password.
func dissectURL(dsn string) Dissection {
	u, err := url.Parse(dsn)
	if err != nil || atOutsideUserinfo(dsn) {
		// An '@' past the host, or a URL Go cannot read: a password
		// holding '/', '?', '#' or a blank was written unescaped, and
		// where it ends is unknown. With the userinfo well inside the
		// authority, a bad port is just that.
		rest := dsn[len(schemeOf(dsn))+3:]
		flaw := flawURL
		if err != nil && !atOutsideUserinfo(dsn) && strings.Contains(err.Error(), "invalid port") {
			flaw = flawPort
		}
		return Dissection{Shown: schemeOf(dsn) + "://" + hiddenURL, Passwords: guessedUserinfoPassword(rest), Flaw: flaw}
	}
	var found []string
	if pw, has := u.User.Password(); has {
		found = append(found, pw)
		u.User = url.UserPassword(u.User.Username(), redactedPassword)
	}
	query, inQuery := redactQuery(u.RawQuery)
	found = append(found, inQuery...)
	u.RawQuery = query
	if u.Fragment != "" || u.RawFragment != "" {
		found = append(found, u.Fragment, u.RawFragment)
		u.Fragment, u.RawFragment = redactedPassword, ""
	}
	if strings.Contains(strings.ToLower(u.Path), "password") {
		// A database is not named so; a password pasted there is.
		found = append(found, u.Path, u.RawPath)
		u.Path, u.RawPath = "/"+redactedPassword, ""
	}
	return Dissection{Shown: u.String(), Passwords: found}
}

// atOutsideUserinfo reports whether a URL has an '@' after its authority:
// then part of what precedes that '@' was meant as userinfo.
func atOutsideUserinfo(dsn string) bool {
	rest := dsn[len(schemeOf(dsn))+3:]
	end := strings.IndexAny(rest, "/?#")
	return end >= 0 && strings.Contains(rest[end:], "@")
}

// redactQuery hides, in a raw query, the value of each key that names a
// password (password, sslpassword, in any case) and each pair the driver
// cannot read (a bad escape, a ';'), which could hold one.
func redactQuery(raw string) (string, []string) {
	if raw == "" {
		return "", nil
	}
	pairs := strings.Split(raw, "&")
	var found []string
	for i, pair := range pairs {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || strings.Contains(pair, ";") {
			found = append(found, pair, v)
			pairs[i] = redactedPassword
			continue
		}
		if strings.Contains(strings.ToLower(key), "password") {
			value, err := url.QueryUnescape(v)
			if err != nil {
				value = v
			}
			found = append(found, value, v)
			pairs[i] = k + "=" + redactedPassword
		}
	}
	return strings.Join(pairs, "&"), found
}

// dissectKeywords reads key=value pairs as the driver does (a value bare up
// to a blank, or single-quoted, with backslash escapes) and hides the value of
// each key naming a password. From a pair it cannot read on, nothing is
// Shown: a password written unquoted with a blank in it continues there.
func dissectKeywords(dsn string) Dissection {
	var b strings.Builder
	var d Dissection
	s := dsn
	for {
		blanks := len(s) - len(strings.TrimLeft(s, asciiBlanks))
		b.WriteString(s[:blanks])
		s = s[blanks:]
		if s == "" {
			d.Shown = b.String()
			return d
		}
		key, raw, value, rest, ok := keywordPair(s)
		if ok && keywordStart.MatchString(raw) {
			// "user= password=x": the driver skips the blank and reads
			// password=x as the user's name. The value was meant empty.
			b.WriteString(s[:len(s)-len(rest)-len(raw)])
			s, ok = raw+rest, false
		}
		if !ok {
			b.WriteString(hiddenPairs)
			d.Shown, d.Flaw = b.String(), flawPairs
			d.Passwords = append(d.Passwords, s)
			return d
		}
		b.WriteString(s[:len(s)-len(rest)-len(raw)])
		if strings.Contains(strings.ToLower(key), "password") {
			d.Passwords = append(d.Passwords, value, raw)
			b.WriteString(redactedPassword)
		} else {
			b.WriteString(raw)
		}
		s = rest
	}
}

const asciiBlanks = " \t\n\r\v\f"

// keywordPair reads one key=value pair at the start of s: the key, the
// value as written (raw) and unquoted, and what follows the pair.
func keywordPair(s string) (key, raw, value, rest string, ok bool) {
	m := keywordStart.FindString(s)
	if m == "" {
		return "", "", "", "", false
	}
	key = strings.Trim(strings.TrimSuffix(m, "="), asciiBlanks)
	after := strings.TrimLeft(s[len(m):], asciiBlanks)
	end, ok := valueEnd(after)
	if !ok {
		return "", "", "", "", false
	}
	raw = after[:end]
	value = raw
	if strings.HasPrefix(raw, "'") {
		value = raw[1 : len(raw)-1]
	}
	value = strings.ReplaceAll(strings.ReplaceAll(value, `\\`, `\`), `\'`, `'`)
	return key, raw, value, after[end:], true
}

// valueEnd returns where the value at the start of s ends, as the driver
// reads it; false when it does not end (an open quote, a trailing
// backslash).
func valueEnd(s string) (int, bool) {
	if strings.HasPrefix(s, "'") {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				return i + 1, true
			}
		}
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		switch {
		case strings.IndexByte(asciiBlanks, s[i]) >= 0:
			return i, true
		case s[i] == '\\':
			if i++; i == len(s) {
				return 0, false
			}
		}
	}
	return len(s), true
}

// dissectUserinfo reads what is neither a URL nor key=value pairs as
// user:password@host, a URL without its scheme. The driver reads no such
// string, so it is flawed, and only a plain user name and host are Shown:
// anything else may hold a piece of a password pasted in the wrong place.
func dissectUserinfo(dsn string) Dissection {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return Dissection{Shown: hiddenAll, Passwords: []string{dsn}, Flaw: flawForm}
	}
	user, host := dsn[:at], dsn[at+1:]
	shown, passwords := user, []string(nil)
	if colon := strings.Index(user, ":"); colon >= 0 {
		user, passwords = user[:colon], []string{user[colon+1:]}
		shown = user + ":" + redactedPassword
	}
	if !plainUser.MatchString(user) {
		shown, passwords = hiddenPart+strings.TrimPrefix(shown, user), append(passwords, user)
	}
	if strings.Count(dsn, "@") > 1 || !plainHost.MatchString(host) {
		// With more than one '@', the password may hold the last.
		host = hiddenPart
	}
	return Dissection{Shown: shown + "@" + host, Passwords: passwords, Flaw: flawForm}
}

// plainUser and plainHost match a user name and a host[:port][/database] as
// they are written in a connection string, and nothing a password may hold.
var (
	plainUser = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	plainHost = regexp.MustCompile(`^[A-Za-z0-9._-]+(:[0-9]+)?(/[A-Za-z0-9._-]*)?$`)
)

// guessedUserinfoPassword is what may be a password in the part of a
// malformed URL after its scheme: between the first ':' and the last '@'.
func guessedUserinfoPassword(rest string) []string {
	at := strings.LastIndex(rest, "@")
	colon := strings.Index(rest, ":")
	if at < 0 || colon < 0 || colon > at {
		return []string{rest}
	}
	return []string{rest[colon+1 : at]}
}

// Spellings returns each password in every spelling an error message might
// repeat it in: as written, unescaped and escaped.
func Spellings(passwords ...string) []string {
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

// Scrub returns err unchanged when its text holds none of secrets as a whole
// value, and otherwise an error with each such occurrence replaced.
func Scrub(err error, secrets []string) error {
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
