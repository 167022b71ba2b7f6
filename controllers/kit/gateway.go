package kit

import (
	"context"
	"fmt"

	tsclient "github.com/apimsync/apimsync/client"
)

// What Backends and Products share about the gateway: the proxy configuration versions of a product's
// environments (a Product promotes from them; a Backend deploys and promotes the products using it).

// ConfigVersions are the latest configuration versions of a product's two environments (0: none).
type ConfigVersions struct {
	Staging, Production int
}

// ReadConfigVersions reads the latest configuration version of each environment of product id.
func ReadConfigVersions(ctx context.Context, c *tsclient.Client, id int64) (*ConfigVersions, error) {
	v := &ConfigVersions{}
	var err error
	if v.Staging, err = LatestConfigVersion(ctx, c, id, tsclient.EnvironmentSandbox); err != nil {
		return nil, err
	}
	if v.Production, err = LatestConfigVersion(ctx, c, id, tsclient.EnvironmentProduction); err != nil {
		return nil, err
	}
	return v, nil
}

// LatestConfigVersion is the latest configuration version of an environment: 0 when it has none (404).
func LatestConfigVersion(ctx context.Context, c *tsclient.Client, id int64, env string) (int, error) {
	cfg, err := c.LatestProxyConfig(ctx, id, env)
	switch {
	case tsclient.IsNotFound(err):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("cannot read the latest %s configuration of product %d: %w", env, id, err)
	}
	return cfg.Version, nil
}
