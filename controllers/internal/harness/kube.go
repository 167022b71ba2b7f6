package harness

import (
	"net/http"
	"sync"
)

// KubeRequests records the requests the manager makes to the API server.
var KubeRequests KubeLog

// KubeLog records requests to the API server; safe for concurrent use.
type KubeLog struct {
	mu   sync.Mutex
	reqs []KubeRequest
}

// Wrap records each request that next makes: a rest.Config's Wrap.
func (l *KubeLog) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, KubeRequest{Method: r.Method, Path: r.URL.Path, Accept: r.Header.Get("Accept"), Watch: r.URL.Query().Get("watch") == "true"})
		l.mu.Unlock()
		return next.RoundTrip(r)
	})
}

// Matching returns the recorded requests that keep says to.
func (l *KubeLog) Matching(keep func(KubeRequest) bool) []KubeRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []KubeRequest
	for _, r := range l.reqs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// Gets counts the manager's GETs of one object by its path.
func (l *KubeLog) Gets(path string) int {
	return len(l.Matching(func(r KubeRequest) bool { return r.Method == http.MethodGet && r.Path == path }))
}

// KubeRequest is one request to the API server.
type KubeRequest struct {
	Method, Path, Accept string
	Watch                bool
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
