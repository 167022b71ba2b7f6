package client

import "context"

// Provider is the tenant's own account, as porta renders a provider (AccountRepresenter's provider
// properties, app/representers/account_representer.rb).
type Provider struct {
	ID                  int64  `json:"id"`
	OrgName             string `json:"org_name"`
	AdminDomain         string `json:"admin_domain"`
	Domain              string `json:"domain"`
	FromEmail           string `json:"from_email"`
	SupportEmail        string `json:"support_email"`
	FinanceSupportEmail string `json:"finance_support_email"`
	SiteAccessCode      string `json:"site_access_code"`
}

// ProviderParams are the provider account's writable details (ProvidersController#provider_params,
// providers_controller.rb:20-22); nil ones are not sent, "" clears one.
type ProviderParams struct {
	FromEmail, SupportEmail, FinanceSupportEmail, SiteAccessCode *string
}

func (p ProviderParams) form() form {
	return form{}.strPtr("from_email", p.FromEmail).strPtr("support_email", p.SupportEmail).
		strPtr("finance_support_email", p.FinanceSupportEmail).strPtr("site_access_code", p.SiteAccessCode)
}

// GetProvider reads the tenant's own account (GET /admin/api/provider.json).
func (c *Client) GetProvider(ctx context.Context) (*Provider, error) {
	return one[Provider](ctx, c, call{method: "GET", endpoint: "/admin/api/provider.json"})
}

// UpdateProvider updates the tenant's own account's details (PUT /admin/api/provider.json).
func (c *Client) UpdateProvider(ctx context.Context, p ProviderParams) (*Provider, error) {
	return one[Provider](ctx, c, call{method: "PUT", endpoint: "/admin/api/provider.json", form: p.form().values()})
}

// WebhookParams are the tenant's webhook settings (WebHooksController#allowed_params,
// web_hooks_controller.rb:21-23): its URL, whether it posts, whether admins' actions post too, and each
// event's switch (WebHook.switchable_attributes, "<event>_on"), all sent, so that one write sets them all.
type WebhookParams struct {
	URL                     string
	Active, ProviderActions bool
	// Events are the events switched on, by porta's names ("account_created"); every other is off.
	Events []string
}

// WebhookEvents are the events a webhook can post, by porta's names (WebHook.switchable_attributes,
// app/models/web_hook.rb, less their "_on").
var WebhookEvents = []string{"account_created", "account_updated", "account_deleted", "user_created", "user_updated", "user_deleted",
	"application_created", "application_updated", "application_deleted", "account_plan_changed", "application_plan_changed",
	"application_user_key_updated", "application_key_created", "application_key_deleted", "application_key_updated", "application_suspended"}

func (p WebhookParams) form() form {
	f := form{}.str("url", p.URL).str("active", boolString(p.Active)).str("provider_actions", boolString(p.ProviderActions))
	for _, e := range WebhookEvents {
		on := false
		for _, w := range p.Events {
			on = on || w == e
		}
		f = f.str(e+"_on", boolString(on))
	}
	return f
}

// UpdateWebhooks sets the tenant's webhook (PUT /admin/api/webhooks.json). porta has no call that reads
// it back: what was written is all that is known of it.
func (c *Client) UpdateWebhooks(ctx context.Context, p WebhookParams) error {
	return c.do(ctx, call{method: "PUT", endpoint: "/admin/api/webhooks.json", form: p.form().values()}, nil)
}
