// Package developerportal syncs DeveloperPortals: the content of a tenant's developer portal (sections,
// layouts, partials, pages, built-in page and partial overrides, files), read from ConfigMaps, written
// through porta's CMS API. One DeveloperPortal per tenant: its remote object is the tenant's root
// section. Everything it syncs is an item of one snapshot (the tenant's CMS, three lists), compared item
// by item; what it made is recorded in status.items, so that it deletes only that (or what a pruned
// section holds), and built-ins are overridden, never deleted.
package developerportal
