package plugin

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tsclient "github.com/apimsync/apimsync/client"
)

// RemoteItem is one object of a tenant, as `kubectl apimsync diff --unmanaged` lists it.
type RemoteItem struct {
	// Kind is the apimsync kind that would hold it.
	Kind string `json:"kind"`
	// ID is its id in 3scale: the one an object of Kind records.
	ID int64 `json:"id"`
	// SystemName is its system name, or what names it where porta shows none (a plan's or an
	// application's name, an account's organization).
	SystemName string `json:"systemName"`
	// Parent names what it belongs to ("product 42", "account 7"), when it belongs to something.
	Parent string `json:"parent,omitempty"`
	// ParentID is the id in Parent (0: none): what a prune deletes it under.
	ParentID int64 `json:"-"`
	// Collection is its collection, when a kind's objects hold several whose ids are apart (a
	// developer portal's sections, pages, layouts, partials, files, sign-in providers); "" otherwise.
	Collection string `json:"collection,omitempty"`
}

// HeldKey is what an apimsync object holding the item records: its collection and id ("page/42", or
// "/42" for a kind of one collection).
func (it RemoteItem) HeldKey() string { return it.Collection + "/" + strconv.FormatInt(it.ID, 10) }

// Pruner deletes one of a kind's objects a tenant's prune found unmanaged. kept, when not empty, says
// why it was not deleted (a kind's own safety rule); nothing is deleted then.
type Pruner func(ctx context.Context, c *tsclient.Client, item RemoteItem) (kept string, err error)

// Inventory lists a kind's objects on a tenant: one list call (paged where porta pages).
type Inventory func(ctx context.Context, c *tsclient.Client) ([]RemoteItem, error)

// Items makes the inventory entries of kind from a list (what names the collection in an error).
func Items[R any](kind, what string, all []R, err error, entry func(R) (id int64, name, parent string)) ([]RemoteItem, error) {
	if err != nil {
		return nil, fmt.Errorf("cannot list the %s: %w", what, err)
	}
	items := make([]RemoteItem, 0, len(all))
	for _, r := range all {
		id, name, parent := entry(r)
		item := RemoteItem{Kind: kind, ID: id, SystemName: name, Parent: parent}
		if i := strings.LastIndexByte(parent, ' '); i >= 0 {
			item.ParentID, _ = strconv.ParseInt(parent[i+1:], 10, 64)
		}
		items = append(items, item)
	}
	return items, nil
}

// Parent names what an object belongs to: "product 42".
func Parent(kind string, id int64) string { return kind + " " + strconv.FormatInt(id, 10) }
