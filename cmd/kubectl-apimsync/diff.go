package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/apimsync/apimsync/internal/convert"
	"github.com/apimsync/apimsync/internal/kustomize"
)

// diffOptions are the flags of `kubectl apimsync diff`.
type diffOptions struct {
	flags     *genericclioptions.ConfigFlags
	streams   genericiooptions.IOStreams
	files     []string
	kustomize string
	// unmanaged lists what no apimsync object holds instead (with secret, the namespace's provider
	// account, and output, "json" or a table).
	unmanaged      bool
	secret, output string
}

// diff's exit codes beyond 0 (nothing to do); see its help.
const (
	exitChanges   = 1 // something in 3scale would change
	exitError     = 2 // an error, as kubectl diff's "above 1"
	exitNotSynced = 3 // some object would be Invalid or wait (Orphan)
)

// usageError is err (a bad flag or argument) with diff's error exit code; nil for nil.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return codedError{code: exitError, msg: err.Error()}
}

// codedError is an error with the process's exit code; with no message, nothing is printed (diff's 1).
type codedError struct {
	code int
	msg  string
}

func (e codedError) Error() string { return e.msg }
func (e codedError) ExitCode() int { return e.code }

func newDiffCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &diffOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "diff (-f FILE|DIR... | -k DIR | --unmanaged)",
		Short: "Show what applying apimsync resources would do to 3scale, before applying them",
		Long: `Show, for each apimsync resource of the files (or of a kustomization), what apimsync would do to 3scale
if it were applied now: create it, the writes that would bring 3scale in line (each request, with the
fields it sets), or nothing. Dependencies are read from the files first, then from the cluster. It reads
3scale and the cluster, and writes to neither: the syncers' own code decides, with a client that lists
the writes instead of sending them, so the writes shown are the ones a sync would make.

Writes to the cluster a sync would make (an Application's credentials Secret) are listed apart, as
"cluster: ...": they change nothing in 3scale. A document read from a Secret is never shown.

An object that would not sync is marked "!": it would be Invalid (its spec cannot work), or would wait
(Orphan) for a dependency that is missing, or that neither is synced nor is created by these files. An
object that waits only for what these files create (the plans of a new Product) is marked ">": it syncs
once that exists, and what it writes is known only then.

Exit status, for a CI job to gate on:
  0  nothing in 3scale would change (writes to the cluster alone are no change), and every object syncs
  1  something in 3scale would change (an update, a create, a ">"), and every object syncs
  2  an error: bad flags or arguments, files that cannot be read or hold no apimsync resource, a tenant
     or cluster that cannot be read (as kubectl diff: above 1 is not "nothing to do")
  3  some object would not sync: Invalid, or waiting (Orphan); the "!" lines say which. It wins over 1.

With --unmanaged, diff lists instead what of the namespace's tenant no apimsync object holds: every
product, backend, application plan, service plan, account plan, field definition, developer account,
application, ActiveDoc and custom policy that no object of the cluster (any namespace) synced to that
tenant records, with its id and system name (or name). One list per collection (paged where 3scale
pages); the last line says how many calls it made. -o json prints {tenant, unmanaged, calls} for a CI
job. Exit status: 0 none, 1 some, 2 an error.`,
		Example: `  # A pull request's GitOps directory, against the namespace it deploys to
  kubectl apimsync diff -n team-a -k gitops/team-a

  # Some files
  kubectl apimsync diff -n team-a -f products.yaml -f plans.yaml

  # What of team-a's tenant no apimsync object holds, as JSON
  kubectl apimsync diff -n team-a --unmanaged -o json`,
		Args: func(cmd *cobra.Command, args []string) error { return usageError(cobra.NoArgs(cmd, args)) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := o.run(cmd.Context())
			if _, coded := err.(codedError); err != nil && !coded {
				return codedError{code: exitError, msg: err.Error()}
			}
			return err
		},
	}
	// A bad flag is an error (2), never "something would change" (1, main's default).
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	cmd.Flags().StringSliceVarP(&o.files, "filename", "f", nil, "A file or directory (read recursively) of apimsync resources; repeatable.")
	cmd.Flags().StringVarP(&o.kustomize, "kustomize", "k", "", "A kustomization directory to build and diff.")
	cmd.Flags().BoolVar(&o.unmanaged, "unmanaged", false, "List what of the namespace's tenant no apimsync object holds, instead of diffing files.")
	cmd.Flags().StringVar(&o.secret, "secret", v1alpha1.DefaultProviderAccountSecret, "With --unmanaged: the provider-account Secret of the namespace naming the tenant.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "With --unmanaged: json, or nothing for a table.")
	return cmd
}

func (o *diffOptions) run(ctx context.Context) error {
	if o.unmanaged {
		return o.runUnmanaged(ctx)
	}
	if (len(o.files) == 0) == (o.kustomize == "") {
		return fmt.Errorf("give either -f FILE|DIR or -k DIR")
	}
	var in []*unstructured.Unstructured
	var err error
	if o.kustomize != "" {
		in, err = kustomize.Build(o.kustomize)
	} else {
		in, err = readFiles(o.files)
	}
	if err != nil {
		return err
	}
	if err := someApimsyncObject(in); err != nil {
		return err
	}
	c, namespace, err := clientFor(o.flags)
	if err != nil {
		return err
	}
	objs, err := typedObjects(in, namespace)
	if err != nil {
		return err
	}
	plans, err := controllers.DiffObjects(ctx, c, scheme(), namespace, objs, controllers.DiffOptions{})
	if err != nil {
		return err
	}
	changes, blocked := printPlans(o.streams.Out, plans)
	switch {
	case blocked:
		return codedError{code: exitNotSynced}
	case changes:
		return codedError{code: exitChanges}
	}
	return nil
}

// typedObjects turns the apimsync objects of in into typed ones in namespace (Secrets and ConfigMaps of
// the files too, which the objects may read); any other kind is refused.
func typedObjects(in []*unstructured.Unstructured, namespace string) ([]client.Object, error) {
	s := scheme()
	var out []client.Object
	for _, u := range in {
		gvk := u.GroupVersionKind()
		if gvk.Group != v1alpha1.GroupVersion.Group && !(gvk.Group == "" && (gvk.Kind == "Secret" || gvk.Kind == "ConfigMap")) {
			continue // another operator's object in the directory: not apimsync's to diff
		}
		obj, err := s.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("%s %s: unknown kind %s of %s", u.GetAPIVersion(), u.GetName(), gvk.Kind, gvk.GroupVersion())
		}
		if ns := u.GetNamespace(); ns != "" && ns != namespace {
			return nil, fmt.Errorf("%s %s is in namespace %s, not %s: diff one namespace at a time (-n)", gvk.Kind, u.GetName(), ns, namespace)
		}
		u.SetNamespace(namespace)
		if err := runtimeConvert(u, obj); err != nil {
			return nil, fmt.Errorf("%s %s: %v", gvk.Kind, u.GetName(), err)
		}
		out = append(out, obj.(client.Object))
	}
	return out, nil
}

// someApimsyncObject refuses an input without an apimsync resource: "nothing would change" would be
// wrong, there being nothing to diff (a directory of something else, or 3scale-operator's resources, which
// convert turns into apimsync's).
func someApimsyncObject(in []*unstructured.Unstructured) error {
	operator := false
	for _, u := range in {
		switch u.GroupVersionKind().Group {
		case v1alpha1.GroupVersion.Group:
			return nil
		case convert.SourceGroup:
			operator = true
		}
	}
	if operator {
		return fmt.Errorf("no apimsync resource (%s) to diff, only 3scale-operator's (%s): convert them first with kubectl apimsync convert",
			v1alpha1.GroupVersion.Group, convert.SourceGroup)
	}
	if len(in) == 0 {
		return fmt.Errorf("no apimsync resource (%s) to diff: the files hold no object", v1alpha1.GroupVersion.Group)
	}
	return fmt.Errorf("no apimsync resource (%s) to diff among the %d objects of the files", v1alpha1.GroupVersion.Group, len(in))
}

// sensitive names the form fields whose values diff never prints.
var sensitive = regexp.MustCompile(`(?i)password|token|secret|key|issuer|credential|policies_config|configuration`)

// printPlans writes the plans, one line per object and one per write (to 3scale, then to the cluster,
// "cluster: ..."), then what the plan details (a template's unified diff), and tells whether any would
// change 3scale (writes to the cluster alone do not), and whether any object would not sync (Invalid,
// or waiting).
func printPlans(out io.Writer, plans []plugin.Plan) (changes, blocked bool) {
	for _, p := range plans {
		mark := map[string]string{"none": "=", "update": "~", "create": "+", "after": ">", "wait": "!", "invalid": "!"}[p.Action]
		fmt.Fprintf(out, "%s %s/%s: %s\n", mark, p.Kind, p.Name, p.Message)
		for _, w := range p.Writes {
			fmt.Fprintf(out, "    %s %s%s\n", w.Method, w.Endpoint, describeForm(w, p.SecretFields))
		}
		for _, w := range p.ClusterWrites {
			fmt.Fprintf(out, "    cluster: %s\n", w)
		}
		for _, d := range p.Details {
			for _, line := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
				fmt.Fprintf(out, "    %s\n", line)
			}
		}
		changes = changes || p.Changes()
		blocked = blocked || p.Blocked()
	}
	return changes, blocked
}

// describeForm is what a write sets: its fields, values shown but for those that may hold a credential
// and those whose values come from a Secret (secretFields).
func describeForm(w tsclient.Write, secretFields []string) string {
	var parts []string
	for k, vs := range w.Form {
		v := strings.Join(vs, ",")
		if sensitive.MatchString(k) || slices.Contains(secretFields, k) {
			v = "(hidden)"
		} else if len(v) > 60 {
			v = v[:57] + "..."
		}
		parts = append(parts, k+"="+v)
	}
	if w.JSON != nil {
		parts = append(parts, "(a JSON body)")
	}
	slices.Sort(parts)
	if len(w.Args) > 0 {
		return fmt.Sprintf(" %s: %s", describeArgs(w), strings.Join(parts, " "))
	}
	return ": " + strings.Join(parts, " ")
}

// describeArgs shows the ids that fill a write's endpoint; a value that is not a number (an application
// key in its path) is hidden.
func describeArgs(w tsclient.Write) string {
	var out []string
	for _, a := range w.Args {
		switch a.(type) {
		case int, int32, int64:
			out = append(out, fmt.Sprint(a))
		default:
			out = append(out, "(hidden)")
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}
