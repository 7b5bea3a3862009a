package testbed

import (
	"net/http"
	"net/http/httptest"
	"strconv"
)

// CutResponse is a fault for a proxy in front of a server: it passes the
// request on to upstream but sends only half of the answer's body, as a
// restarting server or a load balancer dropping the connection would.
// Announcing the whole length and sending half makes the server close the
// connection, and the client read an unexpected end of the body.
func CutResponse(w http.ResponseWriter, r *http.Request, upstream http.Handler) {
	whole := httptest.NewRecorder()
	upstream.ServeHTTP(whole, r)
	body := whole.Body.Bytes()
	for k, v := range whole.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(whole.Code)
	_, _ = w.Write(body[:len(body)/2])
}
