// Package tenantsettings syncs TenantSettings: a tenant's own settings — its provider account's details
// (emails, the developer portal's access code) and its webhook. A tenant has one: its provider account
// always exists, so a TenantSettings takes it over (announced) rather than makes it, and its deletion
// leaves the settings as they are.
package tenantsettings
