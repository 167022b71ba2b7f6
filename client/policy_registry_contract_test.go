package client

import (
	"context"
	"encoding/json"
	"testing"
)

// TestRegistryRefusalsAsPortaSendsThem answers the policy registry calls with porta's refusals
// (Admin::Api::Registry::PoliciesController, Policy; the simulator gives the same bodies,
// test/simulator/registry_test.go) and checks how the client classifies them: a policy a product's
// chain uses is in use, which passes once the chain stops using it; a token without the
// policy_registry scope is forbidden.
func TestRegistryRefusalsAsPortaSendsThem(t *testing.T) {
	const inUse = `{"errors":{"base":["This policy is currently being used in one of your APIs and cannot be modified."]}}`
	del := func(ctx context.Context, c *Client) error { return c.DeleteCustomPolicy(ctx, 3) }
	update := func(ctx context.Context, c *Client) error {
		_, err := c.UpdateCustomPolicy(ctx, 3, CustomPolicyParams{Version: "1.1", Schema: json.RawMessage(`{}`)})
		return err
	}
	create := func(ctx context.Context, c *Client) error {
		_, err := c.CreateCustomPolicy(ctx, CustomPolicyParams{Name: "add_header", Version: "1.0", Schema: json.RawMessage(`{}`)})
		return err
	}
	cases := map[string]errorCase{
		// before_destroy :validate_not_in_use (policy.rb:14,98-102), a refused DELETE rendered 403
		// (responder.rb:67-71).
		"deleting a policy in use: in use, not forbidden": {
			call: del, respond: answer(403, inUse),
			want:        errorClasses{InUse: true, Terminal: true},
			wantMessage: "3scale: DELETE /admin/api/registry/policies/{id}.json: 403 Forbidden: This policy is currently being used in one of your APIs and cannot be modified.",
		},
		// access_token_scopes = :policy_registry (policies_controller.rb:4; by_access_token.rb:100-103).
		"deleting with a token without the policy_registry scope: forbidden": {
			call: del, respond: answer(403, `{"error":"Your access token does not have the correct permissions"}`),
			want:        errorClasses{Forbidden: true, Terminal: true},
			wantMessage: "3scale: DELETE /admin/api/registry/policies/{id}.json: 403 Forbidden: Your access token does not have the correct permissions",
		},
		// authorize! :manage, :policy_registry (policies_controller.rb:50-52; access_control.rb).
		"the registry refused to the account: forbidden": {
			call: del, respond: answer(403, `{"status":"Forbidden"}`),
			want: errorClasses{Forbidden: true, Terminal: true},
		},
		"deleting a policy that is not there": {
			call: del, respond: answer(404, `{"status":"Not found"}`),
			want: errorClasses{NotFound: true},
		},
		// validate :validate_not_in_use, on: :update (policy.rb:13): an update is refused with 422.
		"changing a policy in use: invalid": {
			call: update, respond: answer(422, inUse),
			want:       errorClasses{Invalid: true, Terminal: true},
			wantInText: "This policy is currently being used",
		},
		"a schema porta refuses": {
			call: create, respond: answer(422, `{"errors":{"schema":["object at root is missing required properties: name, version, configuration, summary"],`+
				`"version":["differs from the schema version"]}}`),
			want: errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/registry/policies.json: 422 Unprocessable Entity: schema object at root is missing required " +
				"properties: name, version, configuration, summary; version differs from the schema version",
		},
		"no schema": {
			call: update, respond: answer(400, `Required parameter missing: schema`, "Content-Type", "text/plain; charset=utf-8"),
			want: errorClasses{Terminal: true},
		},
	}
	runErrorCases(t, cases)
}
