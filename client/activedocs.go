package client

import "context"

// ActiveDoc is an ActiveDocs (OpenAPI) spec of the tenant, called api_doc in porta's answers.
type ActiveDoc struct {
	ID                     int64  `json:"id"`
	Name                   string `json:"name"`
	SystemName             string `json:"system_name"`
	Description            string `json:"description"`
	Published              bool   `json:"published"`
	SkipSwaggerValidations bool   `json:"skip_swagger_validations"`
	Body                   string `json:"body"`
	ServiceID              int64  `json:"service_id"`
}

// ActiveDocParams are the writable attributes of a spec; nil and empty ones are not sent.
type ActiveDocParams struct {
	Name                   string
	SystemName             string // only on create
	Description            *string
	Published              *bool
	SkipSwaggerValidations *bool
	Body                   string
	// ServiceID binds the spec to a product; a pointer to 0 unbinds it.
	ServiceID *int64
}

func (p ActiveDocParams) form() form {
	f := form{}.str("name", p.Name).str("system_name", p.SystemName).strPtr("description", p.Description).
		boolPtr("published", p.Published).boolPtr("skip_swagger_validations", p.SkipSwaggerValidations).str("body", p.Body)
	if p.ServiceID != nil {
		if *p.ServiceID == 0 {
			f = f.strPtr("service_id", new(string))
		} else {
			f = f.intPtr("service_id", p.ServiceID)
		}
	}
	return f
}

// ListActiveDocs lists the tenant's specs (GET /admin/api/active_docs.json).
func (c *Client) ListActiveDocs(ctx context.Context) ([]ActiveDoc, error) {
	return list[ActiveDoc](ctx, c, "/admin/api/active_docs.json", false)
}

// GetActiveDoc reads one spec (GET /admin/api/active_docs/{id}.json).
func (c *Client) GetActiveDoc(ctx context.Context, id int64) (*ActiveDoc, error) {
	return one[ActiveDoc](ctx, c, call{method: "GET", endpoint: "/admin/api/active_docs/{id}.json", args: []any{id}})
}

// CreateActiveDoc creates a spec (POST /admin/api/active_docs.json).
func (c *Client) CreateActiveDoc(ctx context.Context, p ActiveDocParams) (*ActiveDoc, error) {
	return one[ActiveDoc](ctx, c, call{method: "POST", endpoint: "/admin/api/active_docs.json", form: p.form().values()})
}

// UpdateActiveDoc updates a spec (PUT /admin/api/active_docs/{id}.json).
func (c *Client) UpdateActiveDoc(ctx context.Context, id int64, p ActiveDocParams) (*ActiveDoc, error) {
	p.SystemName = "" // immutable
	return one[ActiveDoc](ctx, c, call{method: "PUT", endpoint: "/admin/api/active_docs/{id}.json", args: []any{id}, form: p.form().values()})
}

// DeleteActiveDoc deletes a spec (DELETE /admin/api/active_docs/{id}.json).
func (c *Client) DeleteActiveDoc(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/active_docs/{id}.json", args: []any{id}}, nil)
}
