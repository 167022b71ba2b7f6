package client

import "context"

// Scope says whose metrics, methods and mapping rules a call is about: a product's or a backend's.
type Scope struct {
	metrics        string // list and create endpoint of metrics
	mappingRules   string // list and create endpoint of mapping rules
	ruleUpdateVerb string
	paginated      bool
	id             int64
}

// ProductScope addresses the children of product id.
func ProductScope(id int64) Scope {
	return Scope{metrics: "/admin/api/services/{service_id}/metrics", mappingRules: "/admin/api/services/{service_id}/proxy/mapping_rules",
		ruleUpdateVerb: "PATCH", id: id}
}

// BackendScope addresses the children of backend API id.
func BackendScope(id int64) Scope {
	return Scope{metrics: "/admin/api/backend_apis/{backend_api_id}/metrics", mappingRules: "/admin/api/backend_apis/{backend_api_id}/mapping_rules",
		ruleUpdateVerb: "PUT", paginated: true, id: id}
}

// Metric is a metric or a method (a method has a parent: the hits metric).
type Metric struct {
	ID int64 `json:"id"`
	// Name is porta's name of the metric, its system name.
	Name         string `json:"name"`
	SystemName   string `json:"system_name"`
	FriendlyName string `json:"friendly_name"`
	Unit         string `json:"unit"`
	Description  string `json:"description"`
	// ParentID is the hits metric's id for a method, 0 for a metric.
	ParentID  int64  `json:"parent_id"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// MetricParams are the writable attributes of a metric.
type MetricParams struct {
	SystemName   string // only on create
	FriendlyName string
	Unit         string
	Description  string
}

// MethodParams are the writable attributes of a method.
type MethodParams struct {
	SystemName   string // only on create
	FriendlyName string
	Description  string
}

// MappingRule maps requests to the metric they increment.
type MappingRule struct {
	ID         int64  `json:"id"`
	MetricID   int64  `json:"metric_id"`
	Pattern    string `json:"pattern"`
	HTTPMethod string `json:"http_method"`
	Delta      int64  `json:"delta"`
	Position   int64  `json:"position"`
	Last       bool   `json:"last"`
}

// MappingRuleParams are the writable attributes of a mapping rule.
type MappingRuleParams struct {
	HTTPMethod string
	Pattern    string
	MetricID   int64
	Delta      int64
	// Position, when not 0, is sent as position, which porta permits on create and update
	// (porta app/controllers/admin/api/services/mapping_rules_controller.rb:54,
	// backend_apis/mapping_rules_controller.rb:47) and applies with acts_as_list 0.9.17
	// (app/models/proxy_rule.rb:8): on create, the rules at that position or below move down one and the
	// rule takes it, even past the last one; unset, the rule goes last (highest position + 1). On
	// update, the rules between the old and the new position shift only when another rule holds the
	// new one; a free position is taken and leaves a gap. A position below 1 is stored as 1.
	Position int64
	Last     *bool
}

// ListMetrics lists the metrics of a product or backend, methods included (their ParentID is set).
// (GET .../metrics.json; paginated for backends.)
func (c *Client) ListMetrics(ctx context.Context, s Scope) ([]Metric, error) {
	ms, err := list[Metric](ctx, c, s.metrics+".json", s.paginated, s.id)
	for i := range ms {
		if ms[i].SystemName == "" {
			ms[i].SystemName = ms[i].Name
		}
	}
	return ms, err
}

// CreateMetric creates a metric (POST .../metrics.json).
func (c *Client) CreateMetric(ctx context.Context, s Scope, p MetricParams) (*Metric, error) {
	f := form{}.str("system_name", p.SystemName).str("friendly_name", p.FriendlyName).str("unit", p.Unit).str("description", p.Description)
	return settled(ctx, c, func() (*Metric, error) {
		return c.metric(ctx, call{method: "POST", endpoint: s.metrics + ".json", args: []any{s.id}, form: f.values()})
	}, func() (*Metric, error) {
		ms, err := c.ListMetrics(ctx, s)
		return first(ms, err, func(m Metric) bool { return m.ParentID == 0 && sameMetricName(s, m.SystemName, p.SystemName) })
	})
}

// UpdateMetric updates a metric (PUT .../metrics/{id}.json).
func (c *Client) UpdateMetric(ctx context.Context, s Scope, id int64, p MetricParams) (*Metric, error) {
	f := form{}.str("friendly_name", p.FriendlyName).str("unit", p.Unit).strPtr("description", &p.Description)
	return c.metric(ctx, call{method: "PUT", endpoint: s.metrics + "/{id}.json", args: []any{s.id, id}, form: f.values()})
}

// DeleteMetric deletes a metric (DELETE .../metrics/{id}.json).
func (c *Client) DeleteMetric(ctx context.Context, s Scope, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: s.metrics + "/{id}.json", args: []any{s.id, id}}, nil)
}

// ListMethods lists the methods under a metric (GET .../metrics/{metric_id}/methods.json).
func (c *Client) ListMethods(ctx context.Context, s Scope, metricID int64) ([]Metric, error) {
	ms, err := list[Metric](ctx, c, s.metrics+"/{metric_id}/methods.json", s.paginated, s.id, metricID)
	for i := range ms {
		if ms[i].SystemName == "" {
			ms[i].SystemName = ms[i].Name
		}
		if ms[i].ParentID == 0 {
			ms[i].ParentID = metricID
		}
	}
	return ms, err
}

// CreateMethod creates a method under a metric (POST .../metrics/{metric_id}/methods.json).
func (c *Client) CreateMethod(ctx context.Context, s Scope, metricID int64, p MethodParams) (*Metric, error) {
	f := form{}.str("system_name", p.SystemName).str("friendly_name", p.FriendlyName).str("description", p.Description)
	m, err := settled(ctx, c, func() (*Metric, error) {
		return c.metric(ctx, call{method: "POST", endpoint: s.metrics + "/{metric_id}/methods.json", args: []any{s.id, metricID}, form: f.values()})
	}, func() (*Metric, error) {
		ms, err := c.ListMethods(ctx, s, metricID)
		return first(ms, err, func(m Metric) bool { return sameMetricName(s, m.SystemName, p.SystemName) })
	})
	if m != nil && m.ParentID == 0 {
		m.ParentID = metricID
	}
	return m, err
}

// UpdateMethod updates a method (PUT .../metrics/{metric_id}/methods/{id}.json).
func (c *Client) UpdateMethod(ctx context.Context, s Scope, metricID, id int64, p MethodParams) (*Metric, error) {
	f := form{}.str("friendly_name", p.FriendlyName).strPtr("description", &p.Description)
	m, err := c.metric(ctx, call{method: "PUT", endpoint: s.metrics + "/{metric_id}/methods/{id}.json", args: []any{s.id, metricID, id}, form: f.values()})
	if m != nil && m.ParentID == 0 {
		m.ParentID = metricID
	}
	return m, err
}

// DeleteMethod deletes a method (DELETE .../metrics/{metric_id}/methods/{id}.json).
func (c *Client) DeleteMethod(ctx context.Context, s Scope, metricID, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: s.metrics + "/{metric_id}/methods/{id}.json", args: []any{s.id, metricID, id}}, nil)
}

func (c *Client) metric(ctx context.Context, r call) (*Metric, error) {
	m, err := one[Metric](ctx, c, r)
	if m != nil && m.SystemName == "" {
		m.SystemName = m.Name
	}
	return m, err
}

// ListMappingRules lists the mapping rules of a product (GET /admin/api/services/{id}/proxy/mapping_rules.json)
// or a backend (GET /admin/api/backend_apis/{id}/mapping_rules.json, paginated), in porta's order: by
// position (porta app/models/proxy.rb:21, backend_api.rb:22), then id.
func (c *Client) ListMappingRules(ctx context.Context, s Scope) ([]MappingRule, error) {
	return list[MappingRule](ctx, c, s.mappingRules+".json", s.paginated, s.id)
}

func (p MappingRuleParams) form() form {
	return form{}.str("http_method", p.HTTPMethod).str("pattern", p.Pattern).int("metric_id", p.MetricID).
		int("delta", p.Delta).int("position", p.Position).boolPtr("last", p.Last)
}

// CreateMappingRule creates a mapping rule (POST .../mapping_rules.json).
func (c *Client) CreateMappingRule(ctx context.Context, s Scope, p MappingRuleParams) (*MappingRule, error) {
	return settled(ctx, c, func() (*MappingRule, error) {
		return one[MappingRule](ctx, c, call{method: "POST", endpoint: s.mappingRules + ".json", args: []any{s.id}, form: p.form().values()})
	}, func() (*MappingRule, error) {
		rules, err := c.ListMappingRules(ctx, s)
		// The newest of its method, pattern, metric and delta: porta keeps rules alike side by side.
		var found *MappingRule
		for i, r := range rules {
			if err == nil && r.HTTPMethod == p.HTTPMethod && r.Pattern == p.Pattern && r.MetricID == p.MetricID && r.Delta == p.Delta &&
				(found == nil || r.ID > found.ID) {
				found = &rules[i]
			}
		}
		return found, err
	})
}

// UpdateMappingRule updates a mapping rule (PATCH for products, PUT for backends: .../mapping_rules/{id}.json).
func (c *Client) UpdateMappingRule(ctx context.Context, s Scope, id int64, p MappingRuleParams) (*MappingRule, error) {
	return one[MappingRule](ctx, c, call{method: s.ruleUpdateVerb, endpoint: s.mappingRules + "/{id}.json", args: []any{s.id, id}, form: p.form().values()})
}

// DeleteMappingRule deletes a mapping rule (DELETE .../mapping_rules/{id}.json).
func (c *Client) DeleteMappingRule(ctx context.Context, s Scope, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: s.mappingRules + "/{id}.json", args: []any{s.id, id}}, nil)
}
