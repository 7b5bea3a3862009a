package redact

import (
	"encoding/base64"
	"net/url"
)

// BasicAuth returns the credentials of u's userinfo as an HTTP client sends
// them, the base64 of user:password in the Authorization header, for Scrub:
// a server that echoes the request's headers in its error answer (a
// Pushgateway behind a proxy, say) would otherwise show them, and base64 is
// no secret. Nil when u holds no password.
func BasicAuth(u string) []string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.User == nil {
		return nil
	}
	pw, ok := parsed.User.Password()
	if !ok || pw == "" {
		return nil
	}
	plain := parsed.User.Username() + ":" + pw
	return []string{base64.StdEncoding.EncodeToString([]byte(plain)), base64.RawStdEncoding.EncodeToString([]byte(plain))}
}
