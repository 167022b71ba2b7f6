// Package fielddefinition syncs FieldDefinitions: a tenant's field definitions (custom fields) — the
// fields of its developer accounts, their users and applications, built in (org_name, vat_code, ...) or
// extra. A FieldDefinition is known by its target and name, unique in the tenant; a built-in field,
// which every tenant has from its creation, is taken over on purpose (announced) rather than made.
package fielddefinition
