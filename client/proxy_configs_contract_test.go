package client

import (
	"context"
	"testing"

	"github.com/jarcoal/httpmock"
)

// TestProxyConfigRefusalsAsPortaSendsThem answers the proxy config calls with porta's refusals
// (Admin::Api::Services::Proxy::ConfigsController, ProxyConfig; the simulator gives the same bodies,
// test/simulator/proxyconfigs_test.go) and checks how the client classifies them and what it says.
func TestProxyConfigRefusalsAsPortaSendsThem(t *testing.T) {
	latest := func(ctx context.Context, c *Client) error {
		_, err := c.LatestProxyConfig(ctx, 42, EnvironmentProduction)
		return err
	}
	promote := func(ctx context.Context, c *Client) error {
		_, err := c.PromoteProxyConfig(ctx, 42, EnvironmentSandbox, 4, EnvironmentProduction)
		return err
	}
	cases := map[string]errorCase{
		// newest_first.first! of an environment without configs (configs_controller.rb:29-33).
		"no config in the environment yet": {
			call: latest, respond: answer(404, `{"status":"Not found"}`),
			want:        errorClasses{NotFound: true},
			wantMessage: "3scale: GET /admin/api/services/{service_id}/proxy/configs/{environment}/latest.json: 404 Not Found: Not found",
		},
		// ProxyConfig::InvalidEnvironmentError (configs_controller.rb:13-15).
		"an environment porta does not know": {
			call: latest, respond: answer(400, `{"error":"invalid environment"}`),
			want:        errorClasses{Terminal: true},
			wantMessage: "3scale: GET /admin/api/services/{service_id}/proxy/configs/{environment}/latest.json: 400 Bad Request: invalid environment",
		},
		// The copy's version is taken in the destination: a version promoted twice (proxy_config.rb:23-25).
		"a version promoted twice": {
			call: promote, respond: answer(422, `{"errors":{"version":["has already been taken"]}}`),
			want: errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json: " +
				"422 Unprocessable Entity: version has already been taken",
		},
		"promoted to an environment that is not one": {
			call: promote, respond: answer(422, `{"errors":{"environment":["is not included in the list"]}}`),
			want: errorClasses{Invalid: true, Terminal: true},
		},
		// params.require(:to), rendered as text (application_controller.rb:50-52).
		"no destination": {
			call: promote, respond: answer(400, `Required parameter missing: to`, "Content-Type", "text/plain; charset=utf-8"),
			want: errorClasses{Terminal: true},
			wantMessage: "3scale: POST /admin/api/services/{service_id}/proxy/configs/{environment}/{version}/promote.json: " +
				"400 Bad Request: Required parameter missing: to",
		},
		"an unknown version": {
			call: promote, respond: answer(404, `{"status":"Not found"}`),
			want: errorClasses{NotFound: true},
		},
	}
	runErrorCases(t, cases)

	c := newContractClient(t, Config{})
	httpmock.RegisterNoResponder(answer(422, `{"errors":{"version":["has already been taken"]}}`))
	if _, err := c.PromoteProxyConfig(context.Background(), 42, EnvironmentSandbox, 4, EnvironmentProduction); !HasAlreadyBeenTaken(err, "version") {
		t.Errorf("a version promoted twice: %v, want HasAlreadyBeenTaken(version)", err)
	}
}
