package db

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DSNFromEnv builds the connection URL from the environment: DATABASE_URL
// when set, else KEB's APP_DATABASE_* variables (APP_DATABASE_SSLROOTCERT
// included), so the job can run with the
// very secret KEB mounts. An explicit flag beats both; that part is the
// caller's.
func DSNFromEnv(getenv func(string) string) (string, error) {
	if dsn := strings.TrimSpace(getenv("DATABASE_URL")); dsn != "" {
		return dsn, nil
	}
	host := strings.TrimSpace(getenv("APP_DATABASE_HOST"))
	if host == "" {
		return "", errors.New("no database configured: set --database-url, DATABASE_URL, or APP_DATABASE_HOST with APP_DATABASE_USER and APP_DATABASE_NAME")
	}
	user := getenv("APP_DATABASE_USER")
	name := getenv("APP_DATABASE_NAME")
	for _, required := range []struct{ env, value string }{
		{"APP_DATABASE_USER", user},
		{"APP_DATABASE_NAME", name},
	} {
		if strings.TrimSpace(required.value) == "" {
			return "", fmt.Errorf("APP_DATABASE_HOST is set but %s is empty", required.env)
		}
	}
	port := strings.TrimSpace(getenv("APP_DATABASE_PORT"))
	if port == "" {
		port = "5432"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("APP_DATABASE_PORT %q: want a port number between 1 and 65535", port)
	}
	query := url.Values{}
	mode := strings.TrimSpace(getenv("APP_DATABASE_SSLMODE"))
	if mode != "" {
		if !sslModes[mode] {
			return "", fmt.Errorf("APP_DATABASE_SSLMODE %q: want one of disable, allow, prefer, require, verify-ca, verify-full", mode)
		}
		query.Set("sslmode", mode)
	}
	// The CA KEB verifies the server with (KEB's chart mounts the Cloud SQL
	// root certificate and names it here). Not with sslmode disable: there is
	// nothing to verify, and KEB's chart mounts the certificate as optional,
	// so the file may well be absent, which pgx would refuse even then.
	if root := strings.TrimSpace(getenv("APP_DATABASE_SSLROOTCERT")); root != "" && mode != "disable" {
		query.Set("sslrootcert", root)
	}
	userinfo := url.User(user)
	if password := getenv("APP_DATABASE_PASSWORD"); password != "" {
		userinfo = url.UserPassword(user, password)
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     userinfo,
		Host:     net.JoinHostPort(host, port),
		Path:     "/" + name,
		RawQuery: query.Encode(),
	}
	return u.String(), nil
}

var sslModes = map[string]bool{
	"disable": true, "allow": true, "prefer": true, "require": true, "verify-ca": true, "verify-full": true,
}
