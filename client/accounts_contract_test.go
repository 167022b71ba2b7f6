package client

import (
	"context"
	"testing"
)

// TestAccountRefusalsAsPortaSendsThem answers the account, user, application and ActiveDocs calls with
// porta's refusals, as porta renders them, and checks how the client classifies them and what it says.
// The simulator gives the same bodies (test/simulator/*_test.go pin them).
func TestAccountRefusalsAsPortaSendsThem(t *testing.T) {
	cases := map[string]errorCase{
		// Signup: the user's errors reported as the account's (Admin::Api::SignupsController#check_creation_errors,
		// app/controllers/admin/api/signups_controller.rb:23-32); Account validates org_name
		// (app/models/account.rb:267-268), User username and a strong password
		// (app/models/user.rb:89-96, app/lib/authentication/by_password.rb:7,19).
		"signup refused": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Signup(ctx, SignupParams{Password: "pw"})
				return err
			},
			respond: answer(422, `{"errors":{"org_name":["can't be blank","must contain at least one alphanumeric character"],`+
				`"username":["is too short (minimum is 3 characters)"],"password":["is too short (minimum is 15 characters)"]}}`),
			want: errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/signup.json: 422 Unprocessable Entity: org_name can't be blank; " +
				"org_name must contain at least one alphanumeric character; password is too short (minimum is 15 characters); " +
				"username is too short (minimum is 3 characters)",
		},
		"signup with a taken username": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Signup(ctx, SignupParams{OrgName: "ACME", Username: "alice"})
				return err
			},
			respond:    answer(422, `{"errors":{"username":["has already been taken"]}}`),
			want:       errorClasses{Invalid: true, Terminal: true},
			wantInText: "username has already been taken",
		},
		// accounts/find raises RecordNotFound for an unknown username (accounts_controller.rb:141-156).
		"no account with this username": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.FindAccountByUsername(ctx, "nobody")
				return err
			},
			respond:     answer(404, `{"status":"Not found"}`),
			want:        errorClasses{NotFound: true},
			wantMessage: "3scale: GET /admin/api/accounts/find.json: 404 Not Found: Not found",
		},
		// approve fires the event without bang (accounts_controller.rb:75-82): from "approved" it adds
		// state's invalid_transition (config/locales/en.yml:1959), rendered 422 (responder.rb:67-75).
		"approving an approved account": {
			call:        func(ctx context.Context, c *Client) error { _, err := c.ApproveAccount(ctx, 81); return err },
			respond:     answer(422, `{"errors":{"state":["cannot transition via \"approve\""]}}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: `3scale: PUT /admin/api/accounts/{id}/approve.json: 422 Unprocessable Entity: state cannot transition via "approve"`,
		},
		// activate! on a suspended user raises InvalidTransition, rendered by
		// StateMachine::InvalidTransitionRepresenter (app/controllers/admin/api/base_controller.rb:34-36,64-68).
		"activating a suspended user": {
			call: func(ctx context.Context, c *Client) error { _, err := c.ActivateUser(ctx, 81, 82); return err },
			respond: answer(422, `{"error":{"from":"suspended","event":"activate","error":"State cannot transition via \"activate\"",`+
				`"object":{"user":{"id":82,"state":"suspended","role":"member","username":"bob"}}}}`),
			want:       errorClasses{Invalid: true, Terminal: true},
			wantInText: "3scale: PUT /admin/api/accounts/{account_id}/users/{id}/activate.json: 422 Unprocessable Entity",
		},
		// CanCan refuses :update_role on an account's only admin (config/abilities/admin.rb:22-27):
		// 403 {"status":"Forbidden"} (app/controllers/concerns/error_handling.rb:26-28,59).
		"changing the role of the only admin": {
			call:        func(ctx context.Context, c *Client) error { _, err := c.SetUserRole(ctx, 81, 82, "member"); return err },
			respond:     answer(403, `{"status":"Forbidden"}`),
			want:        errorClasses{Forbidden: true, Terminal: true},
			wantMessage: "3scale: PUT /admin/api/accounts/{account_id}/users/{id}/member.json: 403 Forbidden: Forbidden",
		},
		// User#can_be_destroyed? keeps the last admin (app/models/user.rb:45,53-56,349-352; en.yml:2078); a
		// refused DELETE is 403 with the errors.
		"deleting the last admin": {
			call:        func(ctx context.Context, c *Client) error { return c.DeleteUser(ctx, 81, 82) },
			respond:     answer(403, `{"errors":{"base":["Can't delete last admin"]}}`),
			want:        errorClasses{InUse: true, Terminal: true},
			wantMessage: "3scale: DELETE /admin/api/accounts/{account_id}/users/{id}.json: 403 Forbidden: Can't delete last admin",
		},
		// Keys built with the application are validated with it (buyers_applications_controller.rb:18-22;
		// ApplicationKey wants 5 characters at least, application_key.rb:15-17).
		"creating an application with a short key": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateApplication(ctx, 81, ApplicationParams{PlanID: 61, ApplicationKey: "k1"})
				return err
			},
			respond:    answer(422, `{"errors":{"application_keys":["is invalid"]}}`),
			want:       errorClasses{Invalid: true, Terminal: true},
			wantInText: "application_keys is invalid",
		},
		"creating an application with a taken application_id": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateApplication(ctx, 81, ApplicationParams{PlanID: 61, ApplicationID: "a1b2c3d4"})
				return err
			},
			respond:    answer(422, `{"errors":{"application_id":["has already been taken"]}}`),
			want:       errorClasses{Invalid: true, Terminal: true},
			wantInText: "application_id has already been taken",
		},
		// Contract::States: resume only from suspended (app/models/contract/states.rb:35-37), fired without
		// bang (buyers_applications_controller.rb:100-104).
		"resuming a live application": {
			call:        func(ctx context.Context, c *Client) error { _, err := c.ResumeApplication(ctx, 81, 83); return err },
			respond:     answer(422, `{"errors":{"state":["cannot transition via \"resume\""]}}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: `3scale: PUT /admin/api/accounts/{account_id}/applications/{id}/resume.json: 422 Unprocessable Entity: state cannot transition via "resume"`,
		},
		// Cinstance#same_service (app/models/cinstance.rb:113,445-448; en.yml:2061).
		"changing to a plan of another product": {
			call:        func(ctx context.Context, c *Client) error { return c.ChangeApplicationPlan(ctx, 81, 83, 99) },
			respond:     answer(422, `{"errors":{"plan":["not allowed in this context"]}}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: PUT /admin/api/accounts/{account_id}/applications/{id}/change_plan.json: 422 Unprocessable Entity: plan not allowed in this context",
		},
		// Cinstance#keys_limit is 1 for OAuth/OIDC products (cinstance.rb:219-226; application_key.rb:142-148).
		"a second key of an OIDC application": {
			call:        func(ctx context.Context, c *Client) error { return c.CreateApplicationKey(ctx, 81, 83, "key-two") },
			respond:     answer(422, `{"errors":{"base":["Limit reached"]}}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/accounts/{account_id}/applications/{application_id}/keys.json: 422 Unprocessable Entity: Limit reached",
		},
		// remove! finds the key by value (application_key.rb:49-54).
		"removing an unknown key": {
			call:    func(ctx context.Context, c *Client) error { return c.DeleteApplicationKey(ctx, 81, 83, "nope1") },
			respond: answer(404, `{"status":"Not found"}`),
			want:    errorClasses{NotFound: true},
		},
		// Plan#can_be_destroyed? (app/models/plan.rb:71,174-186,483-485; en.yml:2053), 403 as every
		// refused DELETE (app/lib/three_scale/api/responder.rb:67-75).
		"deleting a plan with applications": {
			call:    func(ctx context.Context, c *Client) error { return c.DeletePlan(ctx, 42, 61) },
			respond: answer(403, `{"errors":{"base":["This application plan cannot be deleted! At least one application depends on it."]}}`),
			want:    errorClasses{InUse: true, Terminal: true},
			wantMessage: "3scale: DELETE /admin/api/services/{service_id}/application_plans/{id}.json: 403 Forbidden: " +
				"This application plan cannot be deleted! At least one application depends on it.",
		},
		// new_service_id_permitted (app/controllers/admin/api/api_docs_services_controller.rb:69-74).
		"a spec for a product of another tenant": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateActiveDoc(ctx, ActiveDocParams{Name: "Shop", Body: "{}", ServiceID: ptrTo(int64(999))})
				return err
			},
			respond:     answer(422, `{"error":"Service not found"}`),
			want:        errorClasses{Invalid: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/active_docs.json: 422 Unprocessable Entity: Service not found",
		},
		// ThreeScale::Swagger::Validator (app/lib/three_scale/swagger/validator.rb:17-27) with json_schemer's
		// message, and SystemName's uniqueness (app/models/api_docs/service.rb:14).
		"an invalid spec with a taken system name": {
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateActiveDoc(ctx, ActiveDocParams{Name: "Shop", SystemName: "shop", Body: `{"openapi":"3.0.3"}`})
				return err
			},
			respond: answer(422, `{"errors":{"system_name":["has already been taken"],"body":["object at root is missing required properties: info, paths"]}}`),
			want:    errorClasses{Invalid: true, Taken: true, Terminal: true},
			wantMessage: "3scale: POST /admin/api/active_docs.json: 422 Unprocessable Entity: body object at root is missing required properties: " +
				"info, paths; system_name has already been taken",
		},
	}
	runErrorCases(t, cases)
}
