package developerportal

import (
	"context"
	"strconv"
	"strings"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// Inventory lists the developer portal's items for `kubectl apimsync diff --unmanaged`: its sections
// (but the root, every tenant's), pages, layouts and partials (not the built-in ones: porta's, which
// cannot be deleted — a DeveloperPortal overrides them), files and sign-in providers. Four lists, the
// templates' paged.
func Inventory(ctx context.Context, c *tsclient.Client) ([]plugin.RemoteItem, error) {
	var out []plugin.RemoteItem
	// add appends one collection's items, each saying its collection: the ids of sections, templates,
	// files and providers are apart.
	add := func(collection func(i int) string) func(items []plugin.RemoteItem, err error) error {
		return func(items []plugin.RemoteItem, err error) error {
			for i := range items {
				items[i].Collection = collection(i)
			}
			out = append(out, items...)
			return err
		}
	}
	is := func(c string) func(int) string { return func(int) string { return c } }
	sections, err := c.ListCMSSections(ctx)
	sections = withoutRoot(sections)
	if err := add(is(typeSection))(plugin.Items(kind, "portal's sections", sections, err, func(s tsclient.CMSSection) (int64, string, string) {
		return s.ID, s.SystemName, ""
	})); err != nil {
		return nil, err
	}
	templates, err := c.ListCMSTemplates(ctx)
	templates = ownTemplates(templates)
	if err := add(func(i int) string { return templates[i].Type })(plugin.Items(kind, "portal's templates", templates, err, func(t tsclient.CMSTemplate) (int64, string, string) {
		if t.Type == tsclient.TemplatePage {
			return t.ID, t.Path, ""
		}
		return t.ID, t.SystemName, ""
	})); err != nil {
		return nil, err
	}
	files, err := c.ListCMSFiles(ctx)
	if err := add(is(typeFile))(plugin.Items(kind, "portal's files", files, err, func(f tsclient.CMSFile) (int64, string, string) { return f.ID, f.Path, "" })); err != nil {
		return nil, err
	}
	providers, err := c.ListAuthenticationProviders(ctx)
	if err := add(is(typeSignin))(plugin.Items(kind, "portal's sign-in providers", providers, err, func(p tsclient.AuthenticationProvider) (int64, string, string) {
		return p.ID, p.Kind, ""
	})); err != nil {
		return nil, err
	}
	return out, nil
}

const kind = "DeveloperPortal"

func withoutRoot(sections []tsclient.CMSSection) []tsclient.CMSSection {
	var out []tsclient.CMSSection
	for _, s := range sections {
		if s.ParentID != 0 {
			out = append(out, s)
		}
	}
	return out
}

func ownTemplates(templates []tsclient.CMSTemplate) []tsclient.CMSTemplate {
	var out []tsclient.CMSTemplate
	for _, t := range templates {
		if !strings.HasPrefix(t.Type, "builtin_") {
			out = append(out, t)
		}
	}
	return out
}

// Holds are the portal items a DeveloperPortal holds, as "collection/id": those its status records,
// and the root section.
func Holds(p *v1alpha1.DeveloperPortal) []string {
	out := []string{typeSection + "/" + strconv.FormatInt(p.Status.RootSectionID, 10)}
	for _, it := range p.Status.Items {
		typ, _, _ := strings.Cut(it.Key, ":")
		out = append(out, typ+"/"+strconv.FormatInt(it.ID, 10))
	}
	return out
}
