package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/kit"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// exportOptions are the flags of `kubectl apimsync export`.
type exportOptions struct {
	flags     *genericclioptions.ConfigFlags
	streams   genericiooptions.IOStreams
	out       string
	secret    string
	adminURL  string
	tokenEnv  string
	insecure  bool
	products  []string
	backends  []string
	accounts  []string
	all       bool
	portal    bool
	creds     string
	overwrite bool
	observe   bool
}

func newExportCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &exportOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "export --out DIR [--secret NAME | --admin-url URL] [--all | --product NAME... --backend NAME... --account NAME...] [--portal]",
		Short: "Write a 3scale tenant as apimsync resources that adopt it with no write",
		Long: `Read a 3scale tenant and write its backends, products (with their plans, policies and ActiveDocs), custom
policies, developer accounts (with their users) and applications as apimsync resources, in a kustomize
directory: one file per product, a kustomization.yaml, and templates of the Secrets to fill in. Applied
to a namespace, the resources adopt what is in 3scale with no write (each adoption is announced). What
apimsync cannot model is listed at the end and in kustomization.yaml, never dropped silently. No
credential is written: passwords stay in 3scale and applications adopt their keys, or, with
--credentials secret-refs, both become references to Secrets whose templates you fill in. A policy
configuration that holds what looks like a credential (a headers policy setting Authorization) is
flagged, or, with --credentials secret-refs, read from a Secret (configurationRef) whose template you fill in.

The tenant is the one of the provider-account Secret named by --secret in the namespace (default
threescale-provider-account), or --admin-url with the token in the environment variable --token-env.`,
		Example: `  # The tenant of this namespace's provider account, everything
  kubectl apimsync export --all --out ./tenant

  # A tenant not connected yet: its admin URL, the token from THREESCALE_TOKEN
  THREESCALE_TOKEN=... kubectl apimsync export --all --admin-url https://acme-admin.3scale.net --out ./acme

  # Only the product "shop" and the backends it uses
  kubectl apimsync export --out ./shop --product shop

  # The developer portal's content, as a directory tree and a DeveloperPortal
  kubectl apimsync export --portal --out ./portal

  # Passwords and application keys managed from Secrets (templates to fill in)
  kubectl apimsync export --all --credentials secret-refs --out ./tenant`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().StringVar(&o.out, "out", "", "The directory to write (created; must be empty unless --overwrite). Written all at once: an error leaves it as it was.")
	cmd.Flags().StringVar(&o.secret, "secret", v1alpha1.DefaultProviderAccountSecret, "The provider-account Secret of the namespace to read the tenant's admin URL and token from.")
	cmd.Flags().StringVar(&o.adminURL, "admin-url", "", "The tenant's admin portal, instead of a Secret (the token comes from --token-env).")
	cmd.Flags().StringVar(&o.tokenEnv, "token-env", "THREESCALE_TOKEN", "The environment variable holding the access token, with --admin-url.")
	cmd.Flags().BoolVar(&o.insecure, "allow-insecure-http", false, "Allow a plain http admin URL (test tenants).")
	cmd.Flags().StringSliceVar(&o.products, "product", nil, "Export only this product (system name), with the backends it uses; repeatable.")
	cmd.Flags().StringSliceVar(&o.backends, "backend", nil, "Export only this backend (system name); repeatable.")
	cmd.Flags().StringSliceVar(&o.accounts, "account", nil, "Export only this developer account (organization name), with its applications; repeatable.")
	cmd.Flags().BoolVar(&o.all, "all", false, "Export the whole tenant's API side and accounts; without it, give --product, --backend, --account or --portal.")
	cmd.Flags().BoolVar(&o.portal, "portal", false, "Export the developer portal too (alone: only the portal): a DeveloperPortal, its content as files under portal/, "+
		"a ConfigMap generator per folder.")
	cmd.Flags().StringVar(&o.creds, "credentials", "keep", "keep: users keep their passwords and applications adopt 3scale's credentials; "+
		"secret-refs: users' passwords, applications' credentials and policy configurations that hold a credential become references to Secrets, templates in "+plugin.SecretsFile+".")
	cmd.Flags().BoolVar(&o.observe, "observe", false, "Write every object with spec.management: Observe: applied, each finds its 3scale object, records its id and tells in status.observation what a full sync would write, writing nothing; switch each to Full once that is what you expect (docs/migration.md).")
	cmd.Flags().BoolVar(&o.overwrite, "overwrite", false, "Write into a directory that is not empty: the files and folders the export writes replace those of the same name, the others stay.")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func (o *exportOptions) run(ctx context.Context) error {
	filters := len(o.products) + len(o.backends) + len(o.accounts)
	switch {
	case o.all && filters > 0:
		return fmt.Errorf("--all exports everything: give it alone (with --portal if you want the portal too), or only --product, --backend and --account")
	case !o.all && filters == 0 && !o.portal:
		return fmt.Errorf("say what to export: --all for the whole tenant, or --product, --backend, --account, --portal")
	}
	if o.creds != "keep" && o.creds != "secret-refs" {
		return fmt.Errorf("--credentials is keep or secret-refs, not %q", o.creds)
	}
	if err := o.checkOut(); err != nil {
		return err
	}
	remote, err := o.tenant(ctx)
	if err != nil {
		return err
	}
	exported, err := controllers.ExportTenant(ctx, remote, plugin.ExportOptions{Products: o.products, Backends: o.backends, Accounts: o.accounts,
		CredentialsToSecrets: o.creds == "secret-refs", Portal: o.portal, OnlyPortal: o.portal && !o.all && filters == 0})
	if err != nil {
		return fmt.Errorf("cannot read the tenant: %w", err)
	}
	if o.observe {
		plugin.Observe(exported)
	}
	files, err := writeExport(o.out, exported)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "wrote %s (%s)\n", o.out, strings.Join(files, ", "))
	if len(exported.Templates) > 0 {
		fmt.Fprintf(o.streams.Out, "create the Secrets of %s before applying (from your secret store, or fill it in and apply it by hand; never commit it filled in)\n", plugin.SecretsFile)
	}
	for _, l := range exported.Left {
		fmt.Fprintf(o.streams.Out, "not exported: %s\n", l)
	}
	return nil
}

// checkOut refuses an output directory with files in it, unless --overwrite.
func (o *exportOptions) checkOut() error {
	entries, err := os.ReadDir(o.out)
	if err == nil && len(entries) > 0 && !o.overwrite {
		return fmt.Errorf("%s is not empty: choose another --out, or --overwrite", o.out)
	}
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("cannot read %s: %w", o.out, err)
	}
	return nil
}

// writeDir writes an export into a directory (a test makes it fail).
var writeDir = plugin.WriteDir

// writeExport writes e into out all at once, and returns the files written: into a temporary folder,
// then moved into place, so that an error leaves out as it was (no half-written export, nothing to
// --overwrite). A new out is the temporary folder, made beside it and renamed. An existing one (empty,
// or --overwrite) gets the temporary folder inside it, hidden, and each file and folder the export
// writes (portal/ as a whole) takes the place of the entry of that name, which goes only once every one
// is in place (put back if one fails); its other entries stay.
func writeExport(out string, e *plugin.Exported) (files []string, err error) {
	out = filepath.Clean(out)
	if info, statErr := os.Stat(out); statErr == nil && info.IsDir() {
		return writeInto(out, e)
	}
	parent := filepath.Dir(out)
	made, err := mkdirAll(parent)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".export-")
	if err != nil {
		removeMade(made)
		return nil, fmt.Errorf("cannot write beside %s: %w", out, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
			removeMade(made)
		}
	}()
	if files, err = writeDir(tmp, e, exportHeader); err != nil {
		return nil, fmt.Errorf("cannot write the export (nothing was written to %s): %w", out, err)
	}
	if err = os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err = os.Rename(tmp, out); err != nil {
		return nil, fmt.Errorf("cannot move the export into %s (nothing was written to it): %w", out, err)
	}
	return files, nil
}

// writeInto is writeExport into an existing directory.
func writeInto(out string, e *plugin.Exported) ([]string, error) {
	tmp, err := os.MkdirTemp(out, ".apimsync-export-")
	if err != nil {
		return nil, fmt.Errorf("cannot write into %s: %w", out, err)
	}
	defer os.RemoveAll(tmp)
	files, err := writeDir(filepath.Join(tmp, "new"), e, exportHeader)
	if err != nil {
		return nil, fmt.Errorf("cannot write the export (%s was left as it was): %w", out, err)
	}
	entries, err := os.ReadDir(filepath.Join(tmp, "new"))
	if err != nil {
		return nil, err
	}
	old := filepath.Join(tmp, "old")
	if err := os.Mkdir(old, 0o700); err != nil {
		return nil, err
	}
	var moved []string // entries moved into out, each with what it replaced (if anything) in old
	undo := func() {
		for _, name := range slices.Backward(moved) {
			os.RemoveAll(filepath.Join(out, name))
			if _, err := os.Lstat(filepath.Join(old, name)); err == nil {
				_ = os.Rename(filepath.Join(old, name), filepath.Join(out, name))
			}
		}
	}
	for _, entry := range entries {
		name := entry.Name()
		if err := os.Rename(filepath.Join(out, name), filepath.Join(old, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			undo()
			return nil, fmt.Errorf("cannot replace %s (%s was left as it was): %w", filepath.Join(out, name), out, err)
		}
		moved = append(moved, name)
		if err := os.Rename(filepath.Join(tmp, "new", name), filepath.Join(out, name)); err != nil {
			undo()
			return nil, fmt.Errorf("cannot move the export into %s (it was left as it was): %w", out, err)
		}
	}
	return files, nil
}

// mkdirAll makes dir and its missing parents, and returns the first one it made ("" when dir existed).
func mkdirAll(dir string) (string, error) {
	first := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		first = d
	}
	return first, os.MkdirAll(dir, 0o755)
}

// removeMade removes the folders mkdirAll made, if nothing else went into them.
func removeMade(first string) {
	if first == "" {
		return
	}
	var dirs []string
	_ = filepath.WalkDir(first, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range slices.Backward(dirs) {
		_ = os.Remove(d) // only empty ones go
	}
}

// tenant is a client of the tenant to export: from --admin-url and the token's variable, or from the
// provider-account Secret.
func (o *exportOptions) tenant(ctx context.Context) (*tsclient.Client, error) {
	adminURL, token, insecure := o.adminURL, "", o.insecure
	if adminURL != "" {
		if token = os.Getenv(o.tokenEnv); token == "" {
			return nil, fmt.Errorf("the access token is not set: put it in the environment variable %s", o.tokenEnv)
		}
	} else {
		c, namespace, err := clientFor(o.flags)
		if err != nil {
			return nil, err
		}
		if adminURL, token, insecure, err = providerSecret(ctx, c, namespace, o.secret); err != nil {
			return nil, err
		}
		insecure = insecure || o.insecure
	}
	return tenantClient(ctx, adminURL, token, insecure, nil)
}

// providerSecret reads a provider-account Secret: the tenant's admin URL, the token, and whether plain
// http is allowed.
func providerSecret(ctx context.Context, c client.Client, namespace, name string) (adminURL, token string, insecure bool, err error) {
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &secret); err != nil {
		return "", "", false, fmt.Errorf("cannot read the provider-account Secret %s/%s: %w", namespace, name, err)
	}
	adminURL, token = strings.TrimSpace(string(secret.Data[kit.SecretKeyAdminURL])), strings.TrimSpace(string(secret.Data[kit.SecretKeyToken]))
	if adminURL == "" || token == "" {
		return "", "", false, fmt.Errorf("the Secret %s/%s has no %s or no %s", namespace, name, kit.SecretKeyAdminURL, kit.SecretKeyToken)
	}
	return adminURL, token, string(secret.Data[kit.SecretKeyAllowInsecureHTTP]) == "true", nil
}

// tenantClient is a client of the tenant at adminURL whose token it checks; observer, when set, sees
// each call. Run by a person against a tenant they name: private addresses (an on-premises 3scale) are
// fine.
func tenantClient(ctx context.Context, adminURL, token string, insecure bool, observer tsclient.Observer) (*tsclient.Client, error) {
	remote, err := tsclient.New(tsclient.Config{AdminURL: adminURL, Token: token, UserAgent: "kubectl-apimsync",
		Policy: &tsclient.AdminURLPolicy{AllowInsecureHTTP: insecure, AllowPrivate: true}, Observer: observer})
	if err != nil {
		return nil, fmt.Errorf("cannot use the admin URL: %w", err)
	}
	if err := remote.ProbeCredentials(ctx); err != nil {
		return nil, fmt.Errorf("the tenant refused the token: %w", err)
	}
	return remote, nil
}

// exportHeader opens the kustomization.yaml export writes.
var exportHeader = []string{
	"Written by kubectl apimsync export: apply it to a namespace whose provider-account Secret is this tenant's.",
	"Every object adopts what is in 3scale (announced by an AdoptedExisting event).",
}
