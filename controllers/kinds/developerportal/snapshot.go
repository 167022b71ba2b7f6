package developerportal

import (
	"slices"
	"weak"

	tsclient "github.com/apimsync/apimsync/client"
)

// Snapshot is the tenant's CMS: its sections, templates (with their draft and published content) and
// files, and the hash of the content of the files the spec names (FileHashes, by id: vouched for by
// status.items, or read).
type Snapshot struct {
	RootID     int64
	Sections   []tsclient.CMSSection
	Templates  []tsclient.CMSTemplate
	Files      []tsclient.CMSFile
	FileHashes map[int64]string
	// Settings are the portal's settings, read when the spec manages some (else nil); Providers the
	// sign-in providers, read (ProvidersRead) when the spec lists some or apimsync made some.
	Settings      *tsclient.PortalSettings
	Providers     []tsclient.AuthenticationProvider
	ProvidersRead bool
	// copyOf is the snapshot this one is a copy of (Clone): Update is handed a copy of the one Compare
	// planned over, and carries out Compare's plan when it is (plans.take). Weak, so that a copy cached
	// after an Update keeps none of the snapshots before it alive.
	copyOf weak.Pointer[Snapshot]
}

// itemKind is a kind of remote item: 3scale numbers sections, templates, files and sign-in providers
// apart.
type itemKind int

const (
	kindTemplate itemKind = iota
	kindSection
	kindFile
	kindProvider
)

// remoteItem is a remote item: its kind and id.
type remoteItem struct {
	kind itemKind
	id   int64
}

// RemoteID implements engine.Snapshot: the root section.
func (s *Snapshot) RemoteID() int64 { return s.RootID }

// Clone implements engine.Snapshot.
func (s *Snapshot) Clone() *Snapshot {
	c := &Snapshot{RootID: s.RootID, Sections: slices.Clone(s.Sections), Templates: slices.Clone(s.Templates), Files: slices.Clone(s.Files),
		FileHashes: map[int64]string{}, Providers: slices.Clone(s.Providers), ProvidersRead: s.ProvidersRead, copyOf: weak.Make(s)}
	if s.Settings != nil {
		settings := *s.Settings
		c.Settings = &settings
	}
	for k, v := range s.FileHashes {
		c.FileHashes[k] = v
	}
	return c
}

// section returns the section with id, or with system name name when id is 0.
func (s *Snapshot) section(id int64, name string) *tsclient.CMSSection {
	for i := range s.Sections {
		if (id != 0 && s.Sections[i].ID == id) || (id == 0 && s.Sections[i].SystemName == name) {
			return &s.Sections[i]
		}
	}
	return nil
}

// template returns the template of type typ with id, or (id 0) with the path (pages) or system name
// (the others) of t.
func (s *Snapshot) template(id int64, t Template) *tsclient.CMSTemplate {
	for i := range s.Templates {
		r := &s.Templates[i]
		switch {
		case r.Type != t.Type:
		case id != 0:
			if r.ID == id {
				return r
			}
		case t.Type == tsclient.TemplatePage:
			if r.Path == t.Path {
				return r
			}
		case r.SystemName == t.SystemName:
			return r
		}
	}
	return nil
}

// templateByID returns the template with id.
func (s *Snapshot) templateByID(id int64) *tsclient.CMSTemplate {
	for i := range s.Templates {
		if s.Templates[i].ID == id {
			return &s.Templates[i]
		}
	}
	return nil
}

// file returns the file with id, or with path p when id is 0.
func (s *Snapshot) file(id int64, p string) *tsclient.CMSFile {
	for i := range s.Files {
		if (id != 0 && s.Files[i].ID == id) || (id == 0 && s.Files[i].Path == p) {
			return &s.Files[i]
		}
	}
	return nil
}

// layoutID returns the id of the layout with system name name, 0 when there is none.
func (s *Snapshot) layoutID(name string) int64 {
	for _, t := range s.Templates {
		if t.Type == tsclient.TemplateLayout && t.SystemName == name {
			return t.ID
		}
	}
	return 0
}

// putSection, putTemplate and putFile record what 3scale answered a write with; drop* what it deleted.
func (s *Snapshot) putSection(x tsclient.CMSSection) {
	if i := slices.IndexFunc(s.Sections, func(e tsclient.CMSSection) bool { return e.ID == x.ID }); i >= 0 {
		s.Sections[i] = x
		return
	}
	s.Sections = append(s.Sections, x)
}

func (s *Snapshot) putTemplate(x tsclient.CMSTemplate) {
	if i := slices.IndexFunc(s.Templates, func(e tsclient.CMSTemplate) bool { return e.ID == x.ID }); i >= 0 {
		s.Templates[i] = x
		return
	}
	s.Templates = append(s.Templates, x)
}

func (s *Snapshot) putFile(x tsclient.CMSFile, hash string) {
	s.FileHashes[x.ID] = hash
	if i := slices.IndexFunc(s.Files, func(e tsclient.CMSFile) bool { return e.ID == x.ID }); i >= 0 {
		s.Files[i] = x
		return
	}
	s.Files = append(s.Files, x)
}

func (s *Snapshot) drop(item remoteItem) {
	switch id := item.id; item.kind {
	case kindSection:
		s.Sections = slices.DeleteFunc(s.Sections, func(e tsclient.CMSSection) bool { return e.ID == id })
	case kindFile:
		s.Files = slices.DeleteFunc(s.Files, func(e tsclient.CMSFile) bool { return e.ID == id })
		delete(s.FileHashes, id)
	default:
		s.Templates = slices.DeleteFunc(s.Templates, func(e tsclient.CMSTemplate) bool { return e.ID == id })
	}
}

// provider returns the sign-in provider with id, or of kind when id is 0.
func (s *Snapshot) provider(id int64, kind string) *tsclient.AuthenticationProvider {
	for i := range s.Providers {
		if (id != 0 && s.Providers[i].ID == id) || (id == 0 && s.Providers[i].Kind == kind) {
			return &s.Providers[i]
		}
	}
	return nil
}

func (s *Snapshot) putProvider(x tsclient.AuthenticationProvider) {
	if i := slices.IndexFunc(s.Providers, func(e tsclient.AuthenticationProvider) bool { return e.ID == x.ID }); i >= 0 {
		s.Providers[i] = x
		return
	}
	s.Providers = append(s.Providers, x)
}
