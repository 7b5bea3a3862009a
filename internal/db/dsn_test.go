package db

import (
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/internal/redact"
)

func TestDSNFromEnv(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	kebVars := map[string]string{
		"APP_DATABASE_HOST":     "keb-db.kcp-system",
		"APP_DATABASE_PORT":     "6543",
		"APP_DATABASE_USER":     "keb",
		"APP_DATABASE_PASSWORD": "p@ss:w/rd%",
		"APP_DATABASE_NAME":     "broker",
		"APP_DATABASE_SSLMODE":  "verify-full",
	}

	t.Run("KEB's variables", func(t *testing.T) {
		dsn, err := DSNFromEnv(env(kebVars))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatalf("the driver cannot parse %s: %v", redact.String(dsn), err)
		}
		if cfg.Host != "keb-db.kcp-system" || cfg.Port != 6543 || cfg.User != "keb" || cfg.Password != "p@ss:w/rd%" || cfg.Database != "broker" {
			t.Errorf("parsed back as host %q port %d user %q password ok %v database %q",
				cfg.Host, cfg.Port, cfg.User, cfg.Password == "p@ss:w/rd%", cfg.Database)
		}
	})

	t.Run("KEB's root certificate", func(t *testing.T) {
		vars := map[string]string{"APP_DATABASE_SSLROOTCERT": "/secrets/cloudsql-sslrootcert/server-ca.pem"}
		for k, v := range kebVars {
			vars[k] = v
		}
		dsn, err := DSNFromEnv(env(vars))
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Query().Get("sslrootcert"); got != "/secrets/cloudsql-sslrootcert/server-ca.pem" || u.Query().Get("sslmode") != "verify-full" {
			t.Errorf("query %v: want sslrootcert from APP_DATABASE_SSLROOTCERT next to sslmode", u.Query())
		}
	})

	t.Run("no root certificate without TLS", func(t *testing.T) {
		vars := map[string]string{"APP_DATABASE_SSLROOTCERT": "/secrets/cloudsql-sslrootcert/server-ca.pem"}
		for k, v := range kebVars {
			vars[k] = v
		}
		vars["APP_DATABASE_SSLMODE"] = "disable"
		dsn, err := DSNFromEnv(env(vars))
		if err != nil {
			t.Fatal(err)
		}
		if u, _ := url.Parse(dsn); u.Query().Has("sslrootcert") {
			t.Errorf("query %v: sslrootcert with sslmode disable (a missing optional file would stop the connection)", u.Query())
		}
	})

	t.Run("DATABASE_URL wins", func(t *testing.T) {
		vars := map[string]string{"DATABASE_URL": "postgres://u@h/db"}
		for k, v := range kebVars {
			vars[k] = v
		}
		if dsn, err := DSNFromEnv(env(vars)); err != nil || dsn != "postgres://u@h/db" {
			t.Errorf("got %q, %v; want DATABASE_URL", dsn, err)
		}
	})

	refusals := []struct {
		name     string
		override map[string]string
		mention  []string
	}{
		{"nothing set", map[string]string{"APP_DATABASE_HOST": ""}, []string{"DATABASE_URL", "APP_DATABASE_HOST"}},
		{"no user", map[string]string{"APP_DATABASE_USER": ""}, []string{"APP_DATABASE_USER"}},
		{"no name", map[string]string{"APP_DATABASE_NAME": " "}, []string{"APP_DATABASE_NAME"}},
		{"bad port", map[string]string{"APP_DATABASE_PORT": "54x"}, []string{"APP_DATABASE_PORT", `"54x"`}},
		{"port out of range", map[string]string{"APP_DATABASE_PORT": "70000"}, []string{"APP_DATABASE_PORT", `"70000"`}},
		{"bad sslmode", map[string]string{"APP_DATABASE_SSLMODE": "on"}, []string{"APP_DATABASE_SSLMODE", `"on"`}},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			vars := map[string]string{}
			for k, v := range kebVars {
				vars[k] = v
			}
			for k, v := range r.override {
				vars[k] = v
			}
			_, err := DSNFromEnv(env(vars))
			if err == nil || !containsAll(err.Error(), r.mention...) {
				t.Fatalf("got %v; want an error mentioning %v", err, r.mention)
			}
			assertNoSecret(t, err.Error(), kebVars["APP_DATABASE_PASSWORD"])
		})
	}
}
