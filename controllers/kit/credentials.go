package kit

import (
	"context"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/engine"
)

// CredentialChecks checks a tenant's credentials with one cheap call, shared by every object that uses
// them: when a provider-account Secret changes, each object using it asks, and one call answers them
// all. An accepted token is remembered for the life of its client (a new token makes a new client); a
// refusal for RefusalTTL, so that a token granted access later is seen. Safe for concurrent use.
type CredentialChecks struct {
	// RefusalTTL is how long a refusal is remembered (default one minute).
	RefusalTTL time.Duration

	flight singleflight.Group
	once   sync.Once
	byKey  *lru.Cache[*tsclient.Client, credentialCheck]
}

type credentialCheck struct {
	err error
	at  time.Time
}

var _ engine.CredentialsChecker = &CredentialChecks{}

// Check implements engine.CredentialsChecker. A passing failure (5xx, timeout) is not remembered.
func (c *CredentialChecks) Check(ctx context.Context, s *engine.Session) error {
	if done, err := c.remembered(s.Remote); done {
		return err
	}
	_, err, _ := c.flight.Do(s.Remote.String()+"|"+s.AccountVersion, func() (any, error) {
		err := s.Remote.ProbeCredentials(ctx)
		if err == nil || tsclient.IsUnauthorized(err) || tsclient.IsForbidden(err) {
			c.cache().Add(s.Remote, credentialCheck{err: err, at: time.Now()})
		}
		return nil, err
	})
	return err
}

// cache holds the results by client, as many as the client pool keeps and some.
func (c *CredentialChecks) cache() *lru.Cache[*tsclient.Client, credentialCheck] {
	c.once.Do(func() { c.byKey, _ = lru.New[*tsclient.Client, credentialCheck](1024) })
	return c.byKey
}

func (c *CredentialChecks) remembered(remote *tsclient.Client) (bool, error) {
	r, ok := c.cache().Get(remote)
	if !ok {
		return false, nil
	}
	ttl := c.RefusalTTL
	if ttl <= 0 {
		ttl = time.Minute
	}
	if r.err != nil && time.Since(r.at) > ttl {
		c.cache().Remove(remote)
		return false, nil
	}
	return true, r.err
}
