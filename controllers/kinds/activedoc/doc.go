// Package activedoc syncs ActiveDocs: OpenAPI documents in 3scale's developer portal, compared by meaning.
package activedoc
