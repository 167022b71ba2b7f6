package client

import (
	"context"
	"errors"
	"net/http"
)

// Feature is one of a product's features: what the developer portal lists on plans that enable it
// (porta app/models/feature.rb, app/representers/feature_representer.rb). porta renders the scope
// underscored ("application_plan", "service_plan") but takes it CamelCase ("ApplicationPlan").
type Feature struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	SystemName  string `json:"system_name"`
	Description string `json:"description"`
	Scope       string `json:"scope"`
	Visible     bool   `json:"visible"`
}

// Feature scopes, as porta takes them (Feature validates scope in ["ApplicationPlan", "ServicePlan"]).
const (
	FeatureScopeApplicationPlan = "ApplicationPlan"
	FeatureScopeServicePlan     = "ServicePlan"
)

// FeatureParams are the writable attributes of a feature. porta ignores Scope on update
// (feature_update_params drops it): a feature changes scope only by being made again.
type FeatureParams struct {
	Name, SystemName, Description, Scope string
}

func (p FeatureParams) form(create bool) form {
	f := form{}.str("name", p.Name).str("system_name", p.SystemName)
	f.values().Set("description", p.Description) // "" clears it
	if create {
		f = f.str("scope", p.Scope)
	}
	return f
}

// ListProductFeatures lists a product's features (GET /admin/api/services/{service_id}/features.json):
// all of them, in id order; porta does not page them.
func (c *Client) ListProductFeatures(ctx context.Context, serviceID int64) ([]Feature, error) {
	return list[Feature](ctx, c, "/admin/api/services/{service_id}/features.json", false, serviceID)
}

// CreateProductFeature creates a feature (POST /admin/api/services/{service_id}/features.json). A lost
// answer is settled by its system name, unique in its product.
func (c *Client) CreateProductFeature(ctx context.Context, serviceID int64, p FeatureParams) (*Feature, error) {
	return settled(ctx, c, func() (*Feature, error) {
		return one[Feature](ctx, c, call{method: "POST", endpoint: "/admin/api/services/{service_id}/features.json",
			args: []any{serviceID}, form: p.form(true).values()})
	}, func() (*Feature, error) {
		fs, err := c.ListProductFeatures(ctx, serviceID)
		return first(fs, err, func(f Feature) bool { return f.SystemName == p.SystemName })
	})
}

// UpdateProductFeature updates a feature's name, system name and description
// (PUT /admin/api/services/{service_id}/features/{id}.json).
func (c *Client) UpdateProductFeature(ctx context.Context, serviceID, id int64, p FeatureParams) (*Feature, error) {
	return one[Feature](ctx, c, call{method: "PUT", endpoint: "/admin/api/services/{service_id}/features/{id}.json",
		args: []any{serviceID, id}, form: p.form(false).values()})
}

// DeleteProductFeature deletes a feature (DELETE /admin/api/services/{service_id}/features/{id}.json);
// porta takes it off every plan that enabled it.
func (c *Client) DeleteProductFeature(ctx context.Context, serviceID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/services/{service_id}/features/{id}.json", args: []any{serviceID, id}}, nil)
}

// PlanKind is a kind of plan that enables features: its features endpoints' prefix. An application
// plan enables its product's features of scope ApplicationPlan, a service plan those of scope
// ServicePlan, an account plan the tenant's account features (FeaturingsBaseController and its three
// subclasses, app/controllers/admin/api/*_plan_features_controller.rb).
type PlanKind struct{ prefix string }

// The kinds of plans that enable features.
var (
	ApplicationPlans = PlanKind{"/admin/api/application_plans/{application_plan_id}"}
	ServicePlans     = PlanKind{"/admin/api/service_plans/{service_plan_id}"}
	AccountPlans     = PlanKind{"/admin/api/account_plans/{account_plan_id}"}
)

// ListPlanFeatures lists the features a plan of kind enables
// (GET /admin/api/{kind}/{plan_id}/features.json).
func (c *Client) ListPlanFeatures(ctx context.Context, kind PlanKind, planID int64) ([]Feature, error) {
	return list[Feature](ctx, c, kind.prefix+"/features.json", false, planID)
}

// EnablePlanFeature enables one of its issuer's features on a plan of kind
// (POST /admin/api/{kind}/{plan_id}/features.json). porta answers 409 when the plan enables it already
// (its (plan_id, feature_id) key): that is the state asked for, so it is success here, and an enable
// whose answer was lost is sent again once.
func (c *Client) EnablePlanFeature(ctx context.Context, kind PlanKind, planID, featureID int64) error {
	enable := call{method: "POST", endpoint: kind.prefix + "/features.json",
		args: []any{planID}, form: form{}.int("feature_id", featureID).values()}
	err := c.do(ctx, enable, nil)
	if answerLost(err) && c.dryRun == nil { // sent again: enabled by the first, it answers 409
		err = c.do(ctx, enable, nil)
	}
	var e *APIError
	if errors.As(err, &e) && e.StatusCode == http.StatusConflict {
		return nil
	}
	return err
}

// DisablePlanFeature stops a plan of kind enabling a feature
// (DELETE /admin/api/{kind}/{plan_id}/features/{id}.json); 404 when it does not.
func (c *Client) DisablePlanFeature(ctx context.Context, kind PlanKind, planID, featureID int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: kind.prefix + "/features/{id}.json",
		args: []any{planID, featureID}}, nil)
}

// ListAccountFeatures lists the tenant's account features, those its account plans enable
// (GET /admin/api/features.json): all of them; porta does not page them.
func (c *Client) ListAccountFeatures(ctx context.Context) ([]Feature, error) {
	return list[Feature](ctx, c, "/admin/api/features.json", false)
}

// CreateAccountFeature creates an account feature (POST /admin/api/features.json); porta sets its
// scope to AccountPlan (AccountFeaturesController permits no scope). A lost answer is settled by its
// system name, unique among the account's features.
func (c *Client) CreateAccountFeature(ctx context.Context, p FeatureParams) (*Feature, error) {
	p.Scope = ""
	return settled(ctx, c, func() (*Feature, error) {
		return one[Feature](ctx, c, call{method: "POST", endpoint: "/admin/api/features.json", form: p.form(false).values()})
	}, func() (*Feature, error) {
		fs, err := c.ListAccountFeatures(ctx)
		return first(fs, err, func(f Feature) bool { return f.SystemName == p.SystemName })
	})
}

// UpdateAccountFeature updates an account feature's name, system name and description
// (PUT /admin/api/features/{id}.json).
func (c *Client) UpdateAccountFeature(ctx context.Context, id int64, p FeatureParams) (*Feature, error) {
	return one[Feature](ctx, c, call{method: "PUT", endpoint: "/admin/api/features/{id}.json",
		args: []any{id}, form: p.form(false).values()})
}

// DeleteAccountFeature deletes an account feature (DELETE /admin/api/features/{id}.json); porta takes
// it off every account plan that enabled it.
func (c *Client) DeleteAccountFeature(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/features/{id}.json", args: []any{id}}, nil)
}
