package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A Pushgateway behind basic auth, its credentials in the URL: when it
// refuses the push, the error names the gateway without the password,
// though the client's own message repeats the URL it asked.
func TestPushErrorsNeverShowThePasswordOfTheURL(t *testing.T) {
	const password = "S3cr3t-Pw"
	var sent []string
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		sent = append(sent, pw)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer gateway.Close()
	url := strings.Replace(gateway.URL, "http://", "http://pusher:"+password+"@", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := New().Push(ctx, url, "garden-kyma-prod")
	if err == nil {
		t.Fatal("Push to a gateway answering 500 succeeded")
	}
	t.Logf("Push: %v", err)
	if strings.Contains(err.Error(), password) {
		t.Errorf("error %q shows the password", err)
	}
	if want := "http://pusher:xxxxx@" + strings.TrimPrefix(gateway.URL, "http://"); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the gateway as %s", err, want)
	}
	// The client did send the credentials: the gateway's refusal, not a
	// missing password, is what failed.
	if len(sent) == 0 || sent[len(sent)-1] != password {
		t.Errorf("the gateway got passwords %q, want the URL's", sent)
	}
}
