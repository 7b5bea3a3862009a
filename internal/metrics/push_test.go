package metrics

import (
	"context"
	"encoding/base64"
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

// A gateway (or the proxy before it) whose error answer echoes the request,
// Authorization header included: the push's error, which carries the
// answer's body, shows neither the password nor its base64.
func TestPushErrorsNeverShowTheCredentialsAGatewayEchoes(t *testing.T) {
	const password = "S3cr3t-Pw"
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		http.Error(w, "refused: Authorization: "+r.Header.Get("Authorization")+" password="+pw, http.StatusBadRequest)
	}))
	defer gateway.Close()
	url := strings.Replace(gateway.URL, "http://", "http://pusher:"+password+"@", 1)
	encoded := base64.StdEncoding.EncodeToString([]byte("pusher:" + password))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := New().Push(ctx, url, "garden-kyma-prod")
	if err == nil {
		t.Fatal("Push to a gateway answering 400 succeeded")
	}
	t.Logf("Push: %v", err)
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), encoded) {
		t.Errorf("error %q shows the credentials", err)
	}
	if !strings.Contains(err.Error(), "refused: Authorization: Basic ") {
		t.Errorf("error %q lost the gateway's answer: the test proves nothing", err)
	}
}
