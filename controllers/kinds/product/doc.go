// Package product syncs Products: 3scale services with their gateway (proxy, authentication, policy
// chain, backend usages), children and features, deployed and promoted from state, through their
// lifecycle.
package product
