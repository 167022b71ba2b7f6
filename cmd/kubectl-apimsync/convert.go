package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apimsync/apimsync/controllers/plugin"
	"github.com/apimsync/apimsync/internal/convert"
)

// convertOptions are the flags of `kubectl apimsync convert`.
type convertOptions struct {
	flags         *genericclioptions.ConfigFlags
	streams       genericiooptions.IOStreams
	files         []string
	fromCluster   bool
	allNamespaces bool
	out           string
	expandOpenAPI bool
	overwrite     bool
	observe       bool
}

func newConvertCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &convertOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "convert (-f FILE|DIR... | --from-cluster) --out DIR",
		Short: "Convert 3scale-operator resources into apimsync's, with a report of what does not carry over",
		Long: `Read 3scale-operator's capability resources (capabilities.3scale.net: Backend, Product with its embedded
plans, DeveloperAccount and DeveloperUser, Application, ActiveDoc, CustomPolicyDefinition, OpenAPI,
ProxyConfigPromote, Tenant) from files or from the cluster, and write the apimsync resources that replace
them in a kustomize directory. Embedded plans become ApplicationPlans, DeveloperUsers move into their
account, references are rewritten to object names. Every field with no equivalent, every reference
rewritten and every object skipped is in the report, printed and written to report.txt.

The objects are written without a namespace: apply them to the namespace of your choice (kubectl apply
-n, or the kustomization's namespace). With -f, -n/--namespace writes that namespace into every object;
with --from-cluster, -n is the namespace read (with -A, or files of several namespaces, each object keeps
its own, since objects of one name would collide). --from-cluster also reads the Secrets that hold
ActiveDocs' and OpenAPIs' documents, to name their keys; nothing of them is written.

Switch over one operator at a time, since both would write the same 3scale objects: stop 3scale-operator,
check that kubectl apimsync diff exits 0, apply the result (the apimsync objects adopt 3scale's existing
objects), and once every object is Synced with no write, remove the finalizers of 3scale-operator's
objects and delete them (docs/migration.md).`,
		Example: `  # Files of a GitOps repository
  kubectl apimsync convert -f ./3scale-operator/ --out ./apimsync

  # What 3scale-operator holds in this namespace (or -A: every namespace)
  kubectl apimsync convert --from-cluster --out ./apimsync`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().StringSliceVarP(&o.files, "filename", "f", nil, "A file or directory (read recursively) of 3scale-operator resources; repeatable.")
	cmd.Flags().BoolVar(&o.fromCluster, "from-cluster", false, "Read 3scale-operator's resources from the cluster instead of files.")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "With --from-cluster, read every namespace.")
	cmd.Flags().StringVar(&o.out, "out", "", "The directory to write (created; must be empty unless --overwrite).")
	cmd.Flags().BoolVar(&o.expandOpenAPI, "expand-openapi", false, "Convert the Backend and Product an OpenAPI generated instead of the OpenAPI.")
	cmd.Flags().BoolVar(&o.observe, "observe", false, "Write every object with spec.management: Observe: applied, each finds its 3scale object, records its id and tells in status.observation what a full sync would write, writing nothing; switch each to Full once that is what you expect (docs/migration.md).")
	cmd.Flags().BoolVar(&o.overwrite, "overwrite", false, "Write into a directory that is not empty.")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func (o *convertOptions) run(ctx context.Context) error {
	if (len(o.files) == 0) == !o.fromCluster {
		return errors.New("give either -f FILE|DIR or --from-cluster")
	}
	if err := (&exportOptions{out: o.out, overwrite: o.overwrite}).checkOut(); err != nil {
		return err
	}
	var in []*unstructured.Unstructured
	var err error
	if o.fromCluster {
		in, err = o.readCluster(ctx)
	} else {
		in, err = readFiles(o.files)
	}
	if err != nil {
		return err
	}
	if err := checkKinds(in); err != nil {
		return err
	}
	opts := convert.Options{ExpandOpenAPI: o.expandOpenAPI, NoNamespace: true}
	if ns := *o.flags.Namespace; ns != "" && !o.fromCluster {
		opts.Namespace = ns // asked for: with --from-cluster, -n is the namespace read
	}
	result, err := convert.Convert(in, opts)
	if err != nil {
		return err
	}
	exported := &plugin.Exported{Files: map[string][]client.Object{}}
	for _, obj := range result.Objects {
		file := strings.ToLower(obj.GetObjectKind().GroupVersionKind().Kind)
		if !strings.HasSuffix(file, "s") { // TenantSettings: tenantsettings
			file += "s"
		}
		exported.Files[file] = append(exported.Files[file], obj)
	}
	if o.observe {
		plugin.Observe(exported)
	}
	files, err := plugin.WriteDir(o.out, exported, convertHeader)
	if err != nil {
		return err
	}
	var report bytes.Buffer
	dropped := 0
	for _, f := range result.Findings {
		fmt.Fprintln(&report, f.String())
		if f.Severity == convert.SeverityDropped {
			dropped++
		}
	}
	if err := os.WriteFile(filepath.Join(o.out, "report.txt"), report.Bytes(), 0o644); err != nil {
		return err
	}
	_, _ = io.Copy(o.streams.Out, &report)
	fmt.Fprintf(o.streams.Out, "wrote %s (%s, report.txt): %d objects from %d; %d findings, %d of them dropped or skipped\n",
		o.out, strings.Join(files, ", "), len(result.Objects), len(in), len(result.Findings), dropped)
	return nil
}

// checkKinds refuses a 3scale-operator object of a kind or version the conversion does not know: a typo
// or a newer 3scale-operator, better said at once than skipped.
func checkKinds(in []*unstructured.Unstructured) error {
	known := convert.SourceKinds()
	for _, u := range in {
		gvk := u.GroupVersionKind()
		if gvk.Group != convert.SourceGroup {
			continue
		}
		if v, ok := known[gvk.Kind]; !ok || v != gvk.Version {
			return fmt.Errorf("%s %s/%s: unknown kind %s of %s (known: %s)", u.GetAPIVersion(), u.GetNamespace(), u.GetName(), gvk.Kind, convert.SourceGroup, knownKinds(known))
		}
	}
	return nil
}

func knownKinds(known map[string]string) string {
	var out []string
	for k, v := range known {
		out = append(out, v+"/"+k)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// readFiles reads the YAML or JSON objects of files and directories (recursively: *.yaml, *.yml, *.json).
func readFiles(paths []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("cannot read %s: %w", path, err)
			}
			if d.IsDir() || (path != p && !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(path))) {
				return nil
			}
			objs, err := readObjects(path)
			out = append(out, objs...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readObjects reads the objects of one YAML or JSON file (a stream of documents; Lists flattened by the
// conversion).
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s is not YAML or JSON objects: %v", path, strings.ReplaceAll(err.Error(), "\n", " "))
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: an object without apiVersion and kind", path)
		}
		out = append(out, u)
	}
}

// convertCluster is the cluster convert --from-cluster reads, and the namespace kubectl's flags select
// (a test replaces it).
var convertCluster = func(flags *genericclioptions.ConfigFlags) (client.Reader, string, error) { return clientFor(flags) }

// readCluster lists 3scale-operator's objects of the namespace (or all), and the Secrets they may name.
func (o *convertOptions) readCluster(ctx context.Context) ([]*unstructured.Unstructured, error) {
	c, namespace, err := convertCluster(o.flags)
	if err != nil {
		return nil, err
	}
	if o.allNamespaces {
		namespace = ""
	}
	var out []*unstructured.Unstructured
	installed := false
	for kind, version := range convert.SourceKinds() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: convert.SourceGroup, Version: version, Kind: kind + "List"})
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("cannot list 3scale-operator's %s objects: %w", kind, err)
		}
		installed = true
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	if !installed {
		return nil, errors.New("3scale-operator's resources (capabilities.3scale.net) are not installed in this cluster")
	}
	return append(out, o.readSecrets(ctx, c, convert.SecretsRead(out))...), nil
}

// readSecrets reads the Secrets the conversion reads (convert.SecretsRead: those holding documents). One
// that is missing or not readable is left out, with a line on standard error: the report then says what
// the conversion guessed without it. Their values are never printed.
func (o *convertOptions) readSecrets(ctx context.Context, c client.Reader, keys []client.ObjectKey) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, key := range keys {
		secret := &unstructured.Unstructured{}
		secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := c.Get(ctx, key, secret); err != nil {
			why := "it does not exist"
			if !apierrors.IsNotFound(err) {
				why = "it cannot be read: " + strings.ReplaceAll(err.Error(), "\n", " ")
			}
			fmt.Fprintf(o.streams.ErrOut, "warning: Secret %s/%s, which holds a document, is left out of the conversion: %s\n", key.Namespace, key.Name, why)
			continue
		}
		out = append(out, secret)
	}
	return out
}

// convertHeader opens the kustomization.yaml convert writes.
var convertHeader = []string{
	"Written by kubectl apimsync convert from 3scale-operator's resources: read report.txt before applying.",
	"Stop 3scale-operator, check that kubectl apimsync diff exits 0, then apply: every object adopts what is in 3scale; remove 3scale-operator's objects once all are Synced (docs/migration.md).",
}
