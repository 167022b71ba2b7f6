package client

import "context"

// FieldDefinition is one of the tenant's field definitions: a field of its accounts, users or
// applications, built in (org_name, vat_code...) or extra (app/models/fields_definition.rb,
// FieldsDefinitionRepresenter). Target is porta's class name: "Account", "User" or "Cinstance".
type FieldDefinition struct {
	ID       int64    `json:"id"`
	Target   string   `json:"target"`
	Name     string   `json:"name"`
	Label    string   `json:"label"`
	Required bool     `json:"required"`
	Hidden   bool     `json:"hidden"`
	ReadOnly bool     `json:"read_only"`
	Choices  []string `json:"choices"`
	Position int64    `json:"position"`
}

// FieldDefinitionParams are the writable attributes of a field definition. porta takes Name on create
// only, and keeps Target as it was made (attr_readonly) though its description wants it on update too;
// Position on update only. Choices nil are not sent.
type FieldDefinitionParams struct {
	Target, Name, Label        string
	Required, Hidden, ReadOnly bool
	Choices                    []string
	Position                   int64
}

func (p FieldDefinitionParams) form(create bool) form {
	f := form{}.str("label", p.Label).str("required", boolString(p.Required)).str("hidden", boolString(p.Hidden)).
		str("read_only", boolString(p.ReadOnly)).str("target", p.Target)
	if create {
		f = f.str("name", p.Name)
	} else {
		f = f.int("position", p.Position)
	}
	for _, c := range p.Choices {
		f.values().Add("choices[]", c)
	}
	return f
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ListFieldDefinitions lists the tenant's field definitions, of every target, in position order (GET
// /admin/api/fields_definitions.json); porta does not page them.
func (c *Client) ListFieldDefinitions(ctx context.Context) ([]FieldDefinition, error) {
	return list[FieldDefinition](ctx, c, "/admin/api/fields_definitions.json", false)
}

// GetFieldDefinition reads one field definition (GET /admin/api/fields_definitions/{id}.json).
func (c *Client) GetFieldDefinition(ctx context.Context, id int64) (*FieldDefinition, error) {
	return one[FieldDefinition](ctx, c, call{method: "GET", endpoint: "/admin/api/fields_definitions/{id}.json", args: []any{id}})
}

// CreateFieldDefinition creates a field definition (POST /admin/api/fields_definitions.json). A create
// whose answer was lost is settled by its target and name, unique in the tenant.
func (c *Client) CreateFieldDefinition(ctx context.Context, p FieldDefinitionParams) (*FieldDefinition, error) {
	return settled(ctx, c, func() (*FieldDefinition, error) {
		return one[FieldDefinition](ctx, c, call{method: "POST", endpoint: "/admin/api/fields_definitions.json", form: p.form(true).values()})
	}, func() (*FieldDefinition, error) {
		all, err := c.ListFieldDefinitions(ctx)
		return first(all, err, func(f FieldDefinition) bool { return f.Target == p.Target && f.Name == p.Name })
	})
}

// UpdateFieldDefinition updates a field definition's label, flags, choices and position (PUT
// /admin/api/fields_definitions/{id}.json).
func (c *Client) UpdateFieldDefinition(ctx context.Context, id int64, p FieldDefinitionParams) (*FieldDefinition, error) {
	return one[FieldDefinition](ctx, c, call{method: "PUT", endpoint: "/admin/api/fields_definitions/{id}.json", args: []any{id}, form: p.form(false).values()})
}

// DeleteFieldDefinition deletes a field definition (DELETE /admin/api/fields_definitions/{id}.json);
// porta refuses a field its target requires (org_name, username, email...).
func (c *Client) DeleteFieldDefinition(ctx context.Context, id int64) error {
	return c.do(ctx, call{method: "DELETE", endpoint: "/admin/api/fields_definitions/{id}.json", args: []any{id}}, nil)
}
